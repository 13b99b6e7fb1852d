package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
)

// gcEvidence is a live heap read at GC cycles (gctrace) at the given seconds with the given
// MiB, with the cycle counter; or, given inUse, the live heap and the cycle count sampled
// every second over window seconds (runtime/metrics: each sample repeats the last cycle's
// figures) with the heap in use (inUse(s) MiB); finished.
func gcEvidence(at, mibs []float64, window float64, inUse func(s float64) float64) *evidence.Evidence {
	ev := evidence.New("run", evidence.Target{}, evidence.Options{})
	src := evidence.SourceGCTrace
	if inUse != nil {
		src = evidence.SourceRuntimeMetrics
	}
	live, cycles, heap := evidence.NewGauge(src, 0), evidence.NewCounter(src), evidence.NewGauge(src, 0)
	if inUse == nil {
		cycles.Add(t0.Add(-time.Second), 0)
		for i, s := range at {
			t := t0.Add(time.Duration(s * float64(time.Second)))
			live.Add(t, mibs[i]*mib)
			cycles.Add(t, float64(i+1))
		}
	}
	for s := 0.0; inUse != nil && s <= window; s++ {
		n := 0
		for n < len(at) && at[n] <= s {
			n++
		}
		t := t0.Add(time.Duration(s) * time.Second)
		live.Add(t, mibs[max(n-1, 0)]*mib)
		cycles.Add(t, float64(n))
		heap.Add(t, inUse(s)*mib)
	}
	ev.Live, ev.GCCycles = live.Series(), cycles.Series()
	if inUse != nil {
		ev.HeapInUse = heap.Series()
	}
	ev.Finish(evidence.Options{})
	ev.Start, ev.End = t0, t0.Add(time.Duration(window)*time.Second)
	return ev
}

// TestHeapLeakInBursts: the simulator's bursts-in-gc as memdoctor run saw it (gctrace): the
// GC ran only inside the bursts, the readings of each burst rising fast, the first of the
// next burst (106 MiB) and the last (299 MiB) above the floor the heap came back to (3 MiB).
// Taken for lows they grew 863.6 MiB/min and were a confirmed leak; a GC inside a burst is no
// low, and the readings left between bursts are too few to judge: not judged, waiting on a GC
// between bursts.
func TestHeapLeakInBursts(t *testing.T) {
	ev := gcEvidence([]float64{0.75, 4.4, 9.8, 12.1, 12.2, 12.3, 12.4, 12.7, 13.2, 28.3, 28.7, 29.5, 44.9},
		[]float64{2, 3, 3, 9, 19, 37, 72, 138, 261, 106, 195, 364, 299}, 45, nil)
	out := judgeKind(ev, KindHeapLeak)
	for _, v := range out.verdicts {
		if v.Severity.Rank() >= Warning.Rank() {
			t.Fatalf("a heap leak at %s from readings taken inside bursts: %+v", v.Severity, v)
		}
	}
	if len(out.verdicts) == 0 && (out.unjudged == nil || out.unjudged.Why != WhyInBursts || out.unjudged.Waits == nil) {
		t.Errorf("not judged %+v, want WhyInBursts, waiting on a GC", out.unjudged)
	}
}

// TestHeapLeakWaitsOnGC: one reading of the live heap, from a GC 20 s ago, and too few to
// judge a trend: a reading now settles something only when the heap climbed past it by the
// growth that matters (a leak or garbage: the next GC tells), and the wait is the GC's, about
// every 20 s here.
func TestHeapLeakWaitsOnGC(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inUse func(s float64) float64
		waits bool
	}{
		{"climbing", func(s float64) float64 { return 40 + s/2 }, true},
		{"idle", func(float64) float64 { return 40.5 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := gcEvidence([]float64{0}, []float64{40}, 20, tc.inUse)
			u := judgeKind(ev, KindHeapLeak).unjudged
			if u == nil || u.Why != WhyTooFew {
				t.Fatalf("not judged %+v, want WhyTooFew", u)
			}
			if (u.Waits != nil) != tc.waits {
				t.Fatalf("waits %+v, want %v", u.Waits, tc.waits)
			}
			if tc.waits && (u.Waits.Every != 20*time.Second || u.WatchMoreSeconds != 40) {
				t.Errorf("waits on a GC every %v, watch %.0f s more; want every 20s, 40 s (two more cycles)", u.Waits.Every, u.WatchMoreSeconds)
			}
		})
	}
}

// TestSpikeStep: a step of resident memory, or a growth of the memory bursts leave behind
// (garbage, free heap kept), that the bursts' peak reaches is the spike's, said once; more
// than that, or a growth of the live heap, is not.
func TestSpikeStep(t *testing.T) {
	spike := Verdict{Kind: KindTransientSpike, Severity: Warning, Confidence: Confirmed, Case: &SpikeCase{PeakHeap: 200 * mib}}
	for _, tc := range []struct {
		name string
		c    *MemoryCase
		kept bool
	}{
		{"step within the bursts' reach", &MemoryCase{Step: &MemoryStep{First: 30 * mib, Low: 480 * mib}}, false},
		{"step beyond it", &MemoryCase{Step: &MemoryStep{First: 30 * mib, Low: 800 * mib}}, true},
		{"free heap kept after bursts", &MemoryCase{Part: facts.PartRetained, Rise: Rise{Grew: 300 * mib}}, false},
		{"live heap", &MemoryCase{Part: facts.PartLive, Rise: Rise{Grew: 300 * mib}}, true},
	} {
		vs := reconcile([]Verdict{spike, {Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed, Case: tc.c}}, &Default)
		if got := Of(vs, KindMemoryGrowth) != nil; got != tc.kept {
			t.Errorf("%s: memory-growth kept %v, want %v", tc.name, got, tc.kept)
		}
	}
	info := spike
	info.Severity = Info
	if vs := reconcile([]Verdict{info, {Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed, Case: &MemoryCase{Step: &MemoryStep{First: 30 * mib, Low: 480 * mib}}}}, &Default); Of(vs, KindMemoryGrowth) == nil {
		t.Errorf("a spike at info explains no warning's step")
	}
}

// TestSpikeInProgressWaits: the live heap well above its floor when the window ends, no GC
// since to show whether it comes back: a spike suspected, waiting on a GC after the burst.
func TestSpikeInProgressWaits(t *testing.T) {
	ev := gcEvidence([]float64{2, 6, 10, 14, 18, 22, 26, 29}, []float64{20, 21, 20, 21, 20, 21, 20, 160}, 30, nil)
	sp := judgeKind(ev, KindTransientSpike)
	if len(sp.verdicts) != 1 || sp.verdicts[0].Confidence != Suspected || sp.verdicts[0].Waits == nil {
		t.Errorf("spike %+v: want one suspected, waiting on a GC", sp.verdicts)
	}
}
