package words

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/holders"
)

// TestHoldersCommand: while the process may still run, a heap leak's advice names the
// memdoctor holders command to run next, from the session when there is one, for the
// process when its PID is known, quoted for a shell; once it is gone, none.
func TestHoldersCommand(t *testing.T) {
	culprits := []rule.Culprit{{Function: "example.com/svc.(*store).remember"}, {Function: "example.com/svc.load"}}
	for _, c := range []struct {
		fs   facts.Facts
		want string
	}{
		{facts.Facts{Session: "memdoctor-sessions/svc-1", Target: facts.Target{PID: 42}}, "memdoctor holders --from memdoctor-sessions/svc-1 42"},
		{facts.Facts{Target: facts.Target{PID: 42}}, "memdoctor holders --site 'example.com/svc.(*store).remember' --site example.com/svc.load 42"},
		{facts.Facts{Session: "my sessions/svc"}, "memdoctor holders --from 'my sessions/svc' PID (the process's; or gcore PID, then CORE EXECUTABLE)"},
		{facts.Facts{Session: "s", Target: facts.Target{PID: 42}, Holders: facts.Holders{Gone: true}}, ""},
	} {
		if got := holdersCommand(culprits, &c.fs); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	if got := holdersCommand(nil, &facts.Facts{}); got != "" {
		t.Errorf("no culprits and no session: %q", got)
	}
	if got := shellWord("it's"); got != `'it'\''s'` {
		t.Errorf("shellWord: %s", got)
	}
}

// TestLeakSitesSaid: what a heap leak says of who holds its objects, in each case: read (the
// detail names the heaviest path, and no advice asks to read it again); the process still
// runs (the command); the process gone (what the profiles show, why nothing was read, what
// reads it next time, and no command for the process).
func TestLeakSitesSaid(t *testing.T) {
	named := rule.LeakSitesSaid{Named: true, Old: "profiles/heap-1.pb.gz", New: "profiles/heap-9.pb.gz"}
	held := &holders.Culprit{Site: "example.com/svc.(*store).remember", Samples: 9, Covered: 1,
		Paths: []holders.Path{{Expr: "example.com/svc.registry[value].history[i]", Share: 1, Bytes: 48 << 20}}}
	plain := []rule.Culprit{{Function: "example.com/svc.(*store).remember"}}
	withHeld := []rule.Culprit{{Function: "example.com/svc.(*store).remember", HeldBy: held}}
	gone := func(mode string, h facts.Holders) facts.Facts {
		h.Gone = true
		return facts.Facts{Session: "s", Mode: mode, Target: facts.Target{PID: 42}, Holders: h}
	}
	small := &holders.Culprit{Site: "example.com/svc.handle", Samples: 2, Bytes: 4 << 20, Covered: 1,
		Paths: []holders.Path{{Expr: "io.ReadAll.chunks[i]", Share: 1, Bytes: 4 << 20}}}
	held.Bytes = 48 << 20
	twoHeld := []rule.Culprit{{Function: "example.com/svc.handle", HeldBy: small}, withHeld[0]}
	for _, c := range []struct {
		name     string
		culprits []rule.Culprit
		fs       facts.Facts
		detail   string   // in the detail
		advice   []string // each in some advice
		never    []string // in no advice
	}{
		{"read", withHeld, facts.Facts{Session: "s", Mode: "run", Target: facts.Target{PID: 42}, Holders: facts.Holders{Gone: true, Stopped: 388 * time.Millisecond}},
			"memdoctor read the process's heap (stopping it for 388ms): what svc.(*store).remember allocated is held by example.com/svc.registry[value].history[i] (100%",
			nil, []string{"memdoctor holders", "pprof"}},
		{"read, stacks skipped", withHeld, facts.Facts{Session: "s", Mode: "run", Holders: facts.Holders{Gone: true, Result: &holders.Result{SkippedRanges: 2, SkippedBytes: 12 << 10}}},
			"held by example.com/svc.registry[value].history[i] (100% of its sampled bytes still reachable). 2 stack ranges (12.0 KiB) could not be read while the process was stopped: paths through them are missing.",
			nil, []string{"memdoctor holders"}},
		{"read, the heaviest named", twoHeld, facts.Facts{Session: "s", Mode: "run", Holders: facts.Holders{Gone: true}},
			"what svc.(*store).remember allocated is held by example.com/svc.registry[value].history[i]", nil, []string{"memdoctor holders"}},
		{"runs", plain, facts.Facts{Session: "s", Mode: "watch", Target: facts.Target{PID: 42}},
			"", []string{"memdoctor holders --from s 42"}, nil},
		{"runs, reading failed", plain, facts.Facts{Session: "s", Mode: "watch", Target: facts.Target{PID: 42}, Holders: facts.Holders{Failed: "operation not permitted"}},
			"", []string{"failed (operation not permitted); once that is fixed: memdoctor holders --from s 42"}, nil},
		{"run, exited on its own", plain, gone("run", facts.Holders{Exited: true}),
			"", []string{"go tool pprof -sample_index=inuse_space -diff_base profiles/heap-1.pb.gz profiles/heap-9.pb.gz", "exited on its own", "memdoctor run and demo read it"},
			[]string{"memdoctor holders", " 42"}},
		{"demo, turned off", plain, gone("demo", facts.Holders{Off: true}), "", []string{"--holders=false turned it off"}, []string{"memdoctor holders"}},
		{"run, failed", plain, gone("run", facts.Holders{Failed: "no DWARF"}), "", []string{"reading the process failed (no DWARF)"}, []string{"memdoctor holders"}},
		{"run, never tried", plain, gone("run", facts.Holders{}), "", []string{"the process (pid 42) has exited", "memdoctor run and demo read it"}, []string{"memdoctor holders"}},
		{"watch, gone", plain, gone("watch", facts.Holders{}), "", []string{"memdoctor watch --holders"}, []string{"memdoctor holders"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Finding{Culprits: c.culprits}
			leakSites(&f, named, &c.fs)
			if c.detail != "" && !strings.Contains(f.Detail, c.detail) {
				t.Errorf("detail %q\nwant %q in it", f.Detail, c.detail)
			}
			all := strings.Join(f.Advice, "\n")
			for _, w := range c.advice {
				if !strings.Contains(all, w) {
					t.Errorf("advice %q\nwant %q in it", all, w)
				}
			}
			for _, w := range c.never {
				if strings.Contains(all, w) {
					t.Errorf("advice %q\nnames %q", all, w)
				}
			}
		})
	}
}
