package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/proftest"
)

// In memory: evidence with its heap profiles in hand, diagnosed (facts, rules and words).

// TestOOMKill: an OOM kill the cgroup counted, or a watched process that vanished within
// 10% of its limit, is oom-risk at critical, naming what the last heap profile held; a
// process that ended far from its limit, or a run (which sees how its program ends) without
// a counted kill, is no OOM kill.
func TestOOMKill(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		mode      string
		status    string
		killed    uint64
		lastShare float64
		want      string // in the title; "" = no kill said
	}{
		{"a kill the cgroup counted", "run", "target-exited", 1, 0.97, "the kernel OOM-killed the process"},
		{"a watched process that vanished near its limit", "watch", "target-exited", 0, 0.95, "most likely OOM-killed"},
		{"a watched process that ended far from its limit", "watch", "target-exited", 0, 0.5, ""},
		{"a run that ended near its limit, no kill counted", "run", "target-exited", 0, 0.95, ""},
		{"a watch that ended on time near its limit", "watch", "complete", 0, 0.95, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
			ev := evidence.New(tc.mode, evidence.Target{}, evidence.Options{})
			ev.Status = tc.status
			rss := evidence.NewGauge(evidence.SourceProc, 0)
			for i := range 10 {
				rss.Add(t0.Add(time.Duration(i)*time.Second), float64(i+1)/10*tc.lastShare*256*mib)
			}
			first := evidence.Snapshot{Kind: "heap", T: t0.Add(time.Second), Path: "heap-1.pb.gz"}
			ev.AddProfile(first, proftest.Heap(first.T, proftest.Held(map[string]int64{"example.com/svc.init": 2 * mib})))
			last := evidence.Snapshot{Kind: "heap", T: t0.Add(8500 * time.Millisecond), Label: "before-oom", Path: "heap-2.pb.gz"}
			ev.AddProfile(last, proftest.Heap(last.T, proftest.Held(map[string]int64{
				"example.com/svc.hoard": 180 * mib, "example.com/svc.init": 2 * mib})))
			ev.RSS = rss.Series()
			ev.Budget, ev.BudgetSource = 256*mib, "cgroup"
			ev.OOMKillsInWindow, ev.OOMKills = tc.killed, tc.killed
			ev.Finish(evidence.Options{})
			d := Diagnose(ev, Options{})
			var f *Finding
			for i := range d.Findings {
				if d.Findings[i].Kind == KindOOMRisk {
					f = &d.Findings[i]
				}
			}
			if tc.want == "" {
				if f != nil && strings.Contains(f.Title, "ran out") {
					t.Errorf("said a kill: %s", f.Title)
				}
				return
			}
			if f == nil {
				t.Fatalf("no finding (not judged %+v)", d.NotJudged)
			}
			if f.Severity != Critical || f.Confidence != Confirmed || !strings.Contains(f.Title, tc.want) {
				t.Errorf("%s/%s %q, want critical and %q", f.Severity, f.Confidence, f.Title, tc.want)
			}
			if len(f.Culprits) == 0 || f.Culprits[0].Function != "example.com/svc.hoard" || len(f.Profiles) != 1 || f.Profiles[0] != last.Path {
				t.Errorf("culprits %+v, profiles %v: want what the last heap profile held most", f.Culprits, f.Profiles)
			}
			if got := f.Evidence["last_heap_age_seconds"]; got != 0.5 {
				t.Errorf("last heap profile %.1f s before the last reading, want 0.5", got)
			}
			if !strings.Contains(f.Detail, "The last heap profile (before-oom)") {
				t.Errorf("detail: %s", f.Detail)
			}
		})
	}
}
