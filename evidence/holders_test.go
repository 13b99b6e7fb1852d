package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/session"
)

// TestHolders: the reading of the heap a session holds is in the evidence, unless it was made
// after the evidence's end; a recording that could not read it says why (its holders
// attempt), and that attempt is no note of its own (the finding says it).
func TestHolders(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	read := &holders.Result{Schema: holders.Schema, Read: t0.Add(30 * time.Second),
		Culprits: []holders.Culprit{{Site: "main.remember", Samples: 3, Paths: []holders.Path{{Expr: "main.cache[value]", Share: 1}}, Covered: 1}}}
	fill := func(res *holders.Result, attempt *session.Attempt) func(w *session.Writer) {
		return func(w *session.Writer) {
			w.AppendSample(procSample(t0, 10*mb, 8*mb))
			w.AppendSample(procSample(t0.Add(30*time.Second), 12*mb, 10*mb))
			if res != nil {
				if err := holders.Save(w.Dir(), res); err != nil {
					t.Fatal(err)
				}
			}
			if attempt != nil {
				w.UpdateManifest(func(m *session.Manifest) { m.Attempts = map[string]session.Attempt{holders.Attempt: *attempt} })
			}
		}
	}
	m := session.Manifest{Mode: "run", Start: t0}

	ev := newSessionOpts(t, m, Options{TargetRuns: true}, fill(read, &session.Attempt{Tries: 1, OK: 1}))
	if h := ev.Holders; h.Result == nil || h.Result.Of("main.remember") == nil || h.Unread != "" || !h.TargetRuns {
		t.Errorf("a reading: %+v", h)
	}
	ev = newSessionOpts(t, m, Options{Until: t0.Add(20 * time.Second)}, fill(read, nil))
	if ev.Holders.Result != nil {
		t.Error("a reading made after the evidence's end is in it")
	}
	ev = newSession(t, m, fill(nil, &session.Attempt{Tries: 1, LastError: holders.UnreadExited}))
	if h := ev.Holders; h.Result != nil || h.Unread != holders.UnreadExited {
		t.Errorf("the target exited first: %+v", h)
	}
	for _, n := range ev.Notes {
		if strings.Contains(n, "holders") || strings.Contains(n, holders.UnreadExited) {
			t.Errorf("the holders attempt is a note of its own: %q", n)
		}
	}
}
