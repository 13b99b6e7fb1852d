package recorder

import (
	"errors"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// ErrNoHolders is what Config.Holders returns when there was nothing to read (no confirmed
// heap leak): nothing is counted.
var ErrNoHolders = errors.New("no heap leak to read the holders of")

// holdersTimeout bounds the reading of the holders at the end of a recording (the process is
// stopped only for part of it; memdoctor holders says how long).
const holdersTimeout = 10 * time.Minute

// readHolders calls Config.Holders once the recording of res is over, while the target still
// runs (running is false when it ended on its own), and counts what it did in the manifest's
// attempts. The session's window ends before it (the manifest's end; no gctrace line after
// it), so the time it takes leaves no stretch the recording did not watch. A recording stopped
// at once (Abort) or failed reads nothing.
func (r *recorder) readHolders(res Result, running bool) {
	if r.cfg.Holders == nil || res.Status == session.StatusFailed {
		return
	}
	select {
	case <-r.cfg.Abort:
		return
	default:
	}
	// The recording ends here: what follows (diagnosing the session so far, reading the heap,
	// which stops the target) is no part of its window.
	end := time.Now()
	r.gc.endAt(end)
	r.note(func(m *session.Manifest) { m.End = end.UTC() })
	pid, _ := r.target()
	ctx, cancel := r.abortable(holdersTimeout)
	defer cancel()
	err := r.cfg.Holders(ctx, pid, running)
	if errors.Is(err, ErrNoHolders) {
		return
	}
	r.tries.add(holders.Attempt, err)
}
