package facts

import (
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/holders"
)

// CulpritHolders is who keeps one culprit's objects alive, as memdoctor read it from the process's
// heap: the reference paths from the GC roots to the objects the culprit allocated (the
// holders/v1 culprit of package holders).
type CulpritHolders = holders.Culprit

// Holders is what the facts know of who keeps the heap's objects alive: the reading of the
// target's heap the session holds, or why there is none, and whether the target can still be
// read.
type Holders struct {
	// Result is the reading the session holds (nil when none).
	Result *holders.Result
	// Stopped is how long the reading stopped the process (0 for none, or a core).
	Stopped time.Duration
	// Why the recording did not read them, when it tried: the target had exited on its own
	// (Exited), reading was turned off (Off), or reading the process failed (Failed, the
	// error). All unset when it read them, or never tried.
	Exited, Off bool
	Failed      string
	// Gone is true when the session's process has exited: run and demo stop theirs at the
	// end, and a watched one is gone unless the caller found it running still. No advice
	// names a command for it then.
	Gone bool
}

// Read reports whether the target's heap was read.
func (h *Holders) Read() bool { return h.Result != nil }

// Of returns who holds the objects function allocated, nil when the reading has no such
// culprit (or there was no reading).
func (h *Holders) Of(function string) *CulpritHolders { return h.Result.Of(function) }

// holdersOf takes the evidence's reading of the heap.
func holdersOf(ev *evidence.Evidence) Holders {
	h := ev.Holders
	out := Holders{Result: h.Result}
	switch h.Unread {
	case "":
	case holders.UnreadExited:
		out.Exited = true
	case holders.UnreadOff:
		out.Off = true
	default:
		out.Failed = h.Unread
	}
	if h.Result != nil {
		out.Stopped = time.Duration(h.Result.Stopped * float64(time.Millisecond))
	}
	known := ev.Target.PID > 0 || ev.Mode == "run" || ev.Mode == "demo"
	out.Gone = ev.Session != "" && known && !h.TargetRuns
	return out
}
