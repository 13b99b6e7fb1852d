package facts

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/holders"
)

// TestHoldersOf: why no holders were read comes from the recording's attempt; a session's
// process is gone unless its caller found it running (run and demo always stop theirs), and
// nothing is said gone that is not known (profiles, a service whose PID is not known).
func TestHoldersOf(t *testing.T) {
	read := &holders.Result{Stopped: 388, Culprits: []holders.Culprit{{Site: "main.remember"}}}
	for _, c := range []struct {
		name string
		ev   *evidence.Evidence
		want Holders
	}{
		{"run read", &evidence.Evidence{Mode: "run", Session: "s", Holders: evidence.Holders{Result: read}},
			Holders{Result: read, Stopped: 388 * time.Millisecond, Gone: true}},
		{"run exited", &evidence.Evidence{Mode: "run", Session: "s", Holders: evidence.Holders{Unread: holders.UnreadExited}},
			Holders{Exited: true, Gone: true}},
		{"demo off", &evidence.Evidence{Mode: "demo", Session: "s", Holders: evidence.Holders{Unread: holders.UnreadOff}},
			Holders{Off: true, Gone: true}},
		{"watch failed, still runs", &evidence.Evidence{Mode: "watch", Session: "s", Target: Target{PID: 9}, Holders: evidence.Holders{Unread: "permission denied", TargetRuns: true}},
			Holders{Failed: "permission denied"}},
		{"watch gone", &evidence.Evidence{Mode: "watch", Session: "s", Target: Target{PID: 9}}, Holders{Gone: true}},
		{"watch of a remote URL", &evidence.Evidence{Mode: "watch", Session: "s"}, Holders{}},
		{"profiles", &evidence.Evidence{Mode: "profiles"}, Holders{}},
	} {
		if got := holdersOf(c.ev); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	h := Holders{Result: read}
	if !h.Read() || h.Of("example.com/other.remember") != nil || h.Of("main.remember") == nil {
		t.Error("Of finds the culprit by its function")
	}
}
