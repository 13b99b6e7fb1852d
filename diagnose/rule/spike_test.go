package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
)

// TestSpikeReadAfterABurst: json-whole's heap profiles, one every 10 s on a loaded machine
// (recorded). Each reading is one GC's live heap; the window opens inside bursts (64.6, 56.5,
// then 80.2 MiB) before the heap comes back to 12 MiB. The 80.2 MiB burst rose from the floor
// the heap comes back to, not from the burst read before it: a spike of 56 MiB over a floor
// of 24, a warning.
func TestSpikeReadAfterABurst(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 33, 39, 0, time.UTC)
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	live := evidence.NewGauge(evidence.SourceHeapProfile, 0)
	for _, r := range []struct{ at, mib float64 }{{1.25, 64.6}, {10, 56.5}, {20, 80.2}, {30, 12.0}, {50, 41.1}} {
		live.Add(t0.Add(time.Duration(r.at*float64(time.Second))), r.mib*(1<<20))
	}
	ev.Live = live.Series()
	ev.Finish(evidence.Options{})
	ev.Start, ev.End = t0, t0.Add(60*time.Second)
	out := judgeKind(ev, KindTransientSpike)
	if len(out.verdicts) != 1 || out.verdicts[0].Severity != Warning {
		t.Fatalf("want a transient-spike warning, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	if h := out.verdicts[0].Case.(*SpikeCase).Peak.Height(); h < 50<<20 {
		t.Errorf("the largest spike is %.1f MiB high, want the 80.2 MiB burst above the floor (about 56)", h/(1<<20))
	}
}

// observerSpike is a spike of 100 MiB over a floor of 100 between two periodic heap
// snapshots that saw it (two GCs after it), around which the program allocated progAlloc
// beyond its usual rate and the observer (profilers reading the process) obsAlloc, with no
// observer allocation between the other snapshots.
func observerSpike(progAlloc, obsAlloc int64) *facts.Facts {
	t0 := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	before := facts.Snapshot{Kind: "heap", T: at(20), Path: "a"}
	after := facts.Snapshot{Kind: "heap", T: at(30), Path: "b"}
	sp := facts.Spike{Start: at(24), End: at(25), From: at(23), To: at(26), PeakLive: 200 << 20, Baseline: 100 << 20, Readings: 1}
	diff := &facts.SiteDiff{Type: "alloc_space", Unit: "bytes", Observer: obsAlloc, ByFunction: []culprit.Delta{
		{Site: culprit.Site{Function: "main.handle", Own: true}, Delta: progAlloc, Stack: []string{"main.handle"}},
		{Site: culprit.Site{Function: "strings.(*Builder).Write"}, Delta: obsAlloc, Observer: obsAlloc,
			Stack: []string{"strings.(*Builder).Write", "runtime/pprof.printCountProfile"}},
	}}
	return &facts.Facts{
		Start: t0, End: at(60),
		Spikes:      []facts.Spike{sp},
		Heaps:       []facts.Snapshot{{Kind: "heap", T: at(10), Path: "z"}, before, after, {Kind: "heap", T: at(40), Path: "c"}},
		SpikeAllocs: []facts.SpikeAlloc{{Spike: sp, Before: before, After: after, Shown: true, Diff: diff}},
		Background:  map[string]float64{},
	}
}

// TestSpikeOfTheObserversReads: a spike around which profilers reading the process (a
// goroutine profile of a service of many goroutines) allocated more than its height, and the
// program nothing beyond its usual rate, is theirs: no warning, and the case says so. A spike
// the program's own burst explains stays a warning whatever the observer allocated beside it.
func TestSpikeOfTheObserversReads(t *testing.T) {
	for _, tc := range []struct {
		name        string
		prog, obs   int64
		want        Severity
		wantBy      bool
		wantCulprit string
	}{
		{"the observer's", 5 << 20, 120 << 20, Info, true, "main.handle"},
		{"the program's", 300 << 20, 120 << 20, Warning, false, "main.handle"},
		{"no observer", 300 << 20, 0, Warning, false, "main.handle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := transientSpike(observerSpike(tc.prog, tc.obs), &Default)
			if len(o.verdicts) != 1 {
				t.Fatalf("verdicts %+v", o.verdicts)
			}
			v := o.verdicts[0]
			c := v.Case.(*SpikeCase)
			if v.Severity != tc.want || c.ByObserver != tc.wantBy {
				t.Errorf("severity %v, by the observer %v (program %.2f, observer %.2f of the height); want %v, %v",
					v.Severity, c.ByObserver, c.Explained, c.Observer, tc.want, tc.wantBy)
			}
			for _, cu := range v.Culprits {
				if cu.Function != tc.wantCulprit {
					t.Errorf("culprit %s: the observer's allocation is never a culprit", cu.Function)
				}
			}
		})
	}
}
