package evidence

import (
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// Holders is what is known of who keeps the heap's objects alive: the reading memdoctor made
// of the target's heap while it ran (memdoctor holders, or run, demo and watch --holders
// before they let go of it), or why the recording made none.
type Holders struct {
	// Result is the reading saved in the session (holders.json); nil when there is none, or
	// when it was made after the evidence's end (Options.Until).
	Result *holders.Result
	// Unread is why the recording did not read them (the error of the manifest's holders
	// attempt): the target exited on its own first, reading was turned off, or the process
	// could not be read. "" when it read them, or never tried.
	Unread string
	// TargetRuns is true when the session's target is known to run still (Options.TargetRuns):
	// a command may name its PID.
	TargetRuns bool
}

// readHolders reads the session's holders and the recording's attempt at them.
func (ev *Evidence) readHolders(s *session.Session, opts Options) {
	ev.Holders.TargetRuns = opts.TargetRuns
	if a, ok := s.Manifest.Attempts[holders.Attempt]; ok && a.OK == 0 {
		ev.Holders.Unread = a.LastError
	}
	r, ok, err := holders.Load(s.Dir)
	switch {
	case err != nil:
		ev.Notes = append(ev.Notes, err.Error())
	case !ok:
	case !opts.Until.IsZero() && (r.Read.IsZero() || r.Read.After(opts.Until)):
		// Read after the window's end (or at an unknown time): not yet there as of Until.
	default:
		ev.Holders.Result = r
		ev.Holders.Unread = ""
	}
}
