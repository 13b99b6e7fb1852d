package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// A leak under bursts the GC runs during: every live-heap reading holds a burst's 150 MiB
// buffer or not, so the live heap's total swings and proves nothing; the map that holds the
// leak grows in every heap profile. The site is the verdict, confirmed, and named first.
func TestSiteLeakUnderBursts(t *testing.T) {
	leaked := func(i int) int64 { return int64(i) * 25 * mib }
	burst := func(i int) int64 {
		if i%2 == 1 {
			return 150 * mib // the GC ran while a burst's buffer was live
		}
		return 0
	}
	// The live heap's readings: the burst makes them swing more than the leak grows.
	ev := heapEvidence("watch", evidence.SourceRuntimeMetrics, 9, func(i int) map[string]int64 {
		return map[string]int64{
			"example.com/svc/devices.(*Sessions).open": leaked(i) + 1,
			"example.com/svc/imports.inflateWhole":     burst(i) + 1,
			"example.com/svc/rules.load":               20 * mib,
		}
	}, func(i int) float64 { return float64(20*mib + leaked(i) + burst(i)) })
	out := judgeKind(ev, KindHeapLeak)
	if len(out.verdicts) != 1 {
		t.Fatalf("want one heap-leak verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	v := out.verdicts[0]
	if v.Confidence != Confirmed || v.Severity.Rank() < Warning.Rank() {
		t.Errorf("heap-leak is %s/%s, want a confirmed warning: %+v", v.Confidence, v.Severity, v.Case)
	}
	if len(v.Culprits) == 0 || v.Culprits[0].Function != "example.com/svc/devices.(*Sessions).open" {
		t.Errorf("culprits %+v: want the growing map first", v.Culprits)
	}
	if g := grew(v); g < 150*mib {
		t.Errorf("growth %v: want the site's 200 MiB", g)
	}
}

// A site that fills and stays (a cache warming up, churning entries once full, so that each
// cycle reads it a little differently) is no leak, site by site either.
func TestSiteLeakPlateau(t *testing.T) {
	cache := func(i int) int64 { return int64(min(i, 3))*40*mib + int64(i%3)*300<<10 } // evictions: a few hundred KiB either way
	ev := heapEvidence("watch", evidence.SourceRuntimeMetrics, 12, func(i int) map[string]int64 {
		return map[string]int64{"example.com/svc/cache.(*LRU).add": cache(i) + 1, "example.com/svc/rules.load": 20 * mib}
	}, func(i int) float64 { return float64(20*mib + cache(i)) })
	if out := judgeKind(ev, KindHeapLeak); len(out.verdicts) > 0 {
		t.Errorf("a cache that filled in 30 s and stayed for 80 s: %s %+v", out.verdicts[0].Confidence, out.verdicts[0].Case)
	}
}

// A spike only heap profiles saw: a snapshot taken while a burst's buffer was live, between
// snapshots at the floor. What the spike held is what grew in use from the floor to that
// snapshot; the snapshots after it say nothing about it (its allocation is already behind
// them), so the culprit must come from the one that saw it high.
func TestSpikeCulpritFromTheSnapshotThatSawIt(t *testing.T) {
	burst := func(i int) int64 {
		if i == 2 || i == 5 {
			return 45 * mib // the profile was taken while an import's whole body was live
		}
		return 0
	}
	ev := heapEvidence("profiles", evidence.SourceHeapProfile, 7, func(i int) map[string]int64 {
		return map[string]int64{
			"example.com/svc/imports.(*service).handleImport": burst(i) + 1,
			"example.com/svc/rules.load":                      10 * mib,
			"example.com/svc/conns.(*pool).get":               int64(i%3) * mib,
		}
	}, func(i int) float64 { return float64(11*mib + burst(i)) })
	out := judgeKind(ev, KindTransientSpike)
	if len(out.verdicts) != 1 {
		t.Fatalf("want one transient-spike verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	v := out.verdicts[0]
	if len(v.Culprits) == 0 || v.Culprits[0].Function != "example.com/svc/imports.(*service).handleImport" {
		t.Fatalf("culprits %+v: want the import's handler first", v.Culprits)
	}
	if v.Culprits[0].Share < 0.9 {
		t.Errorf("the handler's share is %.2f: the spike is all its buffer", v.Culprits[0].Share)
	}
}

// A live heap that does not grow: no verdict, and the rules say how slow a leak could be and
// not show: the rule's effect (4 MiB, or 10% of a larger heap) over the window.
func TestHeapLeakStatesItsDetectionLimit(t *testing.T) {
	for _, tc := range []struct {
		live float64 // MiB
		want float64 // MiB per minute over the 60 s the readings span
	}{
		{20, 4},   // 4 MiB is more than 10% of 20 MiB
		{200, 20}, // 10% of 200 MiB
	} {
		lives := make([]float64, 31)
		for i := range lives {
			lives[i] = tc.live + float64(i%3)*0.1
		}
		ev := &evidence.Evidence{Start: t0, End: t0.Add(time.Duration(len(lives)) * 2 * time.Second)}
		for i, l := range lives {
			ev.Live.Points = append(ev.Live.Points, evidence.Point{T: t0.Add(time.Duration(i) * 2 * time.Second), V: l * (1 << 20), Src: evidence.SourceGCTrace})
		}
		ev.Live.Src = evidence.SourceGCTrace
		out := judgeKind(ev, KindHeapLeak)
		if len(out.verdicts) != 0 {
			t.Fatalf("live %v MiB, flat: verdicts %+v", tc.live, out.verdicts)
		}
		if len(out.limits) != 1 || out.limits[0].Kind != KindHeapLeak {
			t.Fatalf("live %v MiB: limits %+v, want heap-leak's", tc.live, out.limits)
		}
		// The floor's lows span a little less than the readings: up to a quarter more per minute.
		if got := out.limits[0].PerMinute / (1 << 20); got < 0.99*tc.want || got > 1.25*tc.want {
			t.Errorf("live %v MiB: limit %.2f MiB/min, want %.0f to %.0f", tc.live, got, tc.want, 1.25*tc.want)
		}
	}
}

// The live heap's own readings (heap profiles, eight of them) stay flat while the GC's goal,
// read with each MemStats sample, has lows that climb (cycles that ran inside bursts): the two
// measures of one quantity disagree, and the goal alone does not confirm a leak.
func TestGoalDoesNotOverruleFlatLiveReadings(t *testing.T) {
	ev := &evidence.Evidence{Start: t0, Pacer: evidence.Pacer{GOGC: 100}}
	for i := range 9 {
		at := t0.Add(time.Duration(i) * 20 * time.Second)
		ev.Live.Points = append(ev.Live.Points, evidence.Point{T: at, V: float64(12*mib + i%2*mib), Src: evidence.SourceHeapProfile})
	}
	ev.Live.Src = evidence.SourceHeapProfile
	for i := range 60 {
		at := t0.Add(time.Duration(i) * 3 * time.Second)
		ev.HeapGoal.Points = append(ev.HeapGoal.Points, evidence.Point{T: at, V: float64(24*mib + i*mib/2), Src: evidence.SourceMemStats})
	}
	ev.HeapGoal.Src = evidence.SourceMemStats
	ev.End = t0.Add(180 * time.Second)
	for _, v := range judgeKind(ev, KindHeapLeak).verdicts {
		if v.Confidence == Confirmed {
			t.Errorf("a confirmed %s from the goal alone: %+v", v.Kind, v.Case)
		}
	}
}

// A slow leak under exports built into one buffer every 15 s, the GC running only inside them
// (export-over-leak on a loaded machine, where the ledger kept 0.25 MiB/s, half its rate):
// every heap profile holds the buffer half-grown (144 MiB) or whole (288 MiB), and the
// profiles change only at an export's GC. The leak's growth that matters is a tenth of the
// heap the exports stand on (HeapLeak.Limits), not of the first profile's total: that total
// held the whole buffer here, and asked the ledger for 29 MiB where it kept 11 in the
// minute, while a first profile taken half-way through an export asked for 15. The ledger's
// four readings rising is a suspected leak, named, whichever the first profile caught.
func TestSiteLeakUnderExportsWhicheverTheFirstProfileCaught(t *testing.T) {
	for _, first := range []int64{144 * mib, 288 * mib} {
		ev := evidence.New("watch", evidence.Target{}, evidence.Options{})
		g := evidence.NewGauge(evidence.SourceRuntimeMetrics, 0)
		var exported int64 // the buffers rendered so far: alloc_space is cumulative
		export := -1
		var rows map[string][2]int64
		var live float64
		for i := range 6 { // a profile every 10 s for a minute
			at := t0.Add(time.Duration(i) * 10 * time.Second)
			if e := i * 10 / 15; e != export { // an export ran since the last profile: its GC is what it shows
				export = e
				buf := first
				if e%2 == 1 {
					buf = 432*mib - first // the other of half-grown and whole
				}
				exported += buf
				ledger := int64(e) * 15 * mib / 4 // 0.25 MiB/s, read at each export's GC
				rows = map[string][2]int64{
					"example.com/svc/orders.(*ledger).record":   {ledger + 1, ledger + 1},
					"example.com/svc/catalog.(*export).render":  {exported, buf},
					"example.com/svc/catalog.(*export).product": {int64(e+1) * 90 * mib, 2 * mib},
					"example.com/svc/config.load":               {2 * mib, 2 * mib},
				}
				live = float64(ledger + buf + 4*mib)
			}
			addHeap(ev, at, rows)
			g.Add(at, live)
		}
		ev.Live = g.Series()
		ev.Finish(evidence.Options{})
		out := judgeKind(ev, KindHeapLeak)
		if len(out.verdicts) != 1 {
			t.Errorf("first profile holding %d MiB of export: want one heap-leak verdict, got %+v (unjudged %+v)", first/mib, out.verdicts, out.unjudged)
			continue
		}
		v := out.verdicts[0]
		if len(v.Culprits) == 0 || v.Culprits[0].Function != "example.com/svc/orders.(*ledger).record" {
			t.Errorf("first profile holding %d MiB of export: culprits %+v, want the ledger first", first/mib, v.Culprits)
		}
	}
}
