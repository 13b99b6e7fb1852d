package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// liveFacts is a live heap read by gctrace every 2 s, in MiB, as its own floor.
func liveFacts(mibs ...float64) *facts.Facts {
	var pts []facts.Point
	for i, v := range mibs {
		pts = append(pts, facts.Point{T: t0.Add(time.Duration(i) * 2 * time.Second), V: v * (1 << 20), Src: facts.SourceGCTrace})
	}
	s := facts.Series{Points: pts, Src: facts.SourceGCTrace}
	return &facts.Facts{
		Start: t0, End: pts[len(pts)-1].T, Live: s,
		LiveReadings: facts.LiveReadings{Series: s, Observed: pts, Floor: pts},
	}
}

func TestHeapLeakFromTheFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mibs  func(i int) float64
		conf  Confidence
		limit bool
	}{
		{"steady leak", func(i int) float64 { return 20 + float64(i) }, Confirmed, false},
		{"flat", func(i int) float64 { return 20 + float64(i%3)*0.1 }, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mibs []float64
			for i := range 31 {
				mibs = append(mibs, tc.mibs(i))
			}
			out := heapLeak(liveFacts(mibs...), &Default)
			var got Confidence
			if len(out.verdicts) == 1 {
				got = out.verdicts[0].Confidence
				if c, ok := out.verdicts[0].Case.(*HeapLeakCase); !ok || c.Rise.Grew < 20<<20 {
					t.Errorf("case %+v, want a heap leak that grew 30 MiB", out.verdicts[0].Case)
				}
			}
			if got != tc.conf {
				t.Errorf("confidence %q, want %q (verdicts %+v, unjudged %+v)", got, tc.conf, out.verdicts, out.unjudged)
			}
			if tc.limit && (len(out.limits) != 1 || len(out.notes) != 1 || out.notes[0].What != NoteDetectionLimit) {
				t.Errorf("limits %+v, notes %+v: want heap-leak's detection limit, said", out.limits, out.notes)
			}
			// Without heap profiles the culprits cannot be named: a note says so.
			if len(out.verdicts) == 1 && (len(out.notes) != 1 || out.notes[0].What != NoteNoProfilePair) {
				t.Errorf("notes %+v, want that no pair of heap profiles named the sites", out.notes)
			}
		})
	}
}

func TestTooFewLiveReadings(t *testing.T) {
	out := heapLeak(liveFacts(10, 20), &Default)
	if u := out.unjudged; u == nil || u.Why != WhyTooFew || u.N != 2 || u.WatchMoreSeconds <= 0 {
		t.Errorf("unjudged %+v, want too few readings and how much longer to watch", u)
	}
}

// A heap that grows with a goroutine leak, by what each new goroutine plausibly holds, is said
// once, by the goroutine leak: the heap leak stays as information.
func TestHeldByGoroutines(t *testing.T) {
	for _, tc := range []struct {
		grew float64
		want Severity
	}{
		{1000 * 32 << 10, Info},     // 32 KiB per goroutine
		{1000 * 512 << 10, Warning}, // far beyond what a goroutine holds
	} {
		heap := &HeapLeakCase{Rise: Rise{Grew: tc.grew}}
		gor := &GoroutineLeakCase{Rise: &Rise{First: 100, Last: 1100}}
		vs := reconcile([]Verdict{
			{Kind: KindHeapLeak, Severity: Warning, Confidence: Confirmed, Case: heap},
			{Kind: KindGoroutineLeak, Severity: Warning, Confidence: Confirmed, Case: gor},
		}, &Default)
		if got := Of(vs, KindHeapLeak).Severity; got != tc.want {
			t.Errorf("heap grew %.0f bytes with 1000 goroutines: %s, want %s", tc.grew, got, tc.want)
		}
		if (heap.HeldBy != nil) != (tc.want == Info) || (gor.Holds != nil) != (tc.want == Info) {
			t.Errorf("heap grew %.0f: held %+v, holds %+v", tc.grew, heap.HeldBy, gor.Holds)
		}
	}
	// A suspected heap leak the goroutines explain has nothing left to watch for: a watch
	// --until-confirmed is not held by it (the lab's goroutine-leak kept one until 55 s).
	heap := &HeapLeakCase{Rise: Rise{Grew: 1000 * 2 << 10}}
	vs := reconcile([]Verdict{
		{Kind: KindHeapLeak, Severity: Info, Confidence: Suspected, WatchMoreSeconds: 29, Case: heap},
		{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed, Case: &GoroutineLeakCase{Rise: &Rise{First: 100, Last: 1100}}},
	}, &Default)
	if v := Of(vs, KindHeapLeak); heap.HeldBy == nil || v.WatchMoreSeconds != 0 || v.Confidence != Suspected || v.Severity != Info {
		t.Errorf("a suspected heap leak the goroutines hold: %+v, held by %+v; want suspected at info, held, nothing to watch", v, heap.HeldBy)
	}
}

// TestHeapConfirmsFewGoroutineCounts: four goroutine profiles of a service of 114,000
// goroutines, each higher (a large service serves them slowly), are too few to confirm a
// rise; the live heap, confirmed over its own six readings, grew by what the new goroutines
// hold (1.1 KiB each): it confirms the goroutines' rise, and is said as theirs (the lab's
// subscriber-flood from its profiles alone). A rise that is not all upward, or a heap that
// grew far more than goroutines hold, confirms nothing.
func TestHeapConfirmsFewGoroutineCounts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tau, grew float64
		want      Confidence
	}{
		{"every count higher, 1 KiB each", 1, 101 << 20, Confirmed},
		{"a count fell, 1 KiB each", 0.33, 101 << 20, Suspected},
		{"every count higher, 1 MiB each", 1, 98000 << 20, Suspected},
	} {
		gor := &GoroutineLeakCase{Rise: &Rise{First: 114177, Last: 212267, PerMinute: 122630, N: 4, Tau: tc.tau, StillRising: true, Confidence: Suspected}}
		heap := &HeapLeakCase{Rise: Rise{Grew: tc.grew}}
		vs := reconcile([]Verdict{
			{Kind: KindHeapLeak, Severity: Warning, Confidence: Confirmed, Case: heap},
			{Kind: KindGoroutineLeak, Severity: Info, Confidence: Suspected, WatchMoreSeconds: 32, Case: gor},
		}, &Default)
		g := Of(vs, KindGoroutineLeak)
		if g.Confidence != tc.want || gor.ByHeap != (tc.want == Confirmed) {
			t.Errorf("%s: goroutine leak %s (by the heap: %v), want %s", tc.name, g.Confidence, gor.ByHeap, tc.want)
		}
		if tc.want == Confirmed && (g.Severity != Critical || g.WatchMoreSeconds != 0 || Of(vs, KindHeapLeak).Severity != Info) {
			t.Errorf("%s: goroutine leak %s, watch %.0f s more, heap leak %s; want critical, nothing to watch, the heap at info",
				tc.name, g.Severity, g.WatchMoreSeconds, Of(vs, KindHeapLeak).Severity)
		}
	}
}

// A memory-growth verdict whose part another verdict explains is dropped.
func TestGrowthExplainedOnce(t *testing.T) {
	vs := reconcile([]Verdict{
		{Kind: KindHeapLeak, Severity: Warning, Confidence: Confirmed, Case: &HeapLeakCase{}},
		{Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed, Case: &MemoryCase{Part: facts.PartLive}},
		{Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed, Case: &MemoryCase{Part: facts.PartNonGo}},
	}, &Default)
	if len(vs) != 2 || vs[1].Case.(*MemoryCase).Part != facts.PartNonGo {
		t.Errorf("kept %+v, want the heap leak and the non-Go growth no verdict explains", vs)
	}
}

// Resident memory that stepped up fourfold, by half a GiB, and stayed: a warning, though it no
// longer rises.
func TestMemoryStep(t *testing.T) {
	var pts []facts.Point
	for i := range 20 {
		v := 150.0
		if i >= 5 {
			v = 650
		}
		pts = append(pts, facts.Point{T: t0.Add(time.Duration(i) * time.Second), V: v * (1 << 20)})
	}
	fs := &facts.Facts{Start: t0, End: pts[19].T, Resident: facts.Resident{Series: facts.Series{Points: pts}, Settled: pts}}
	out := memoryStep(fs, &Default)
	if len(out.verdicts) != 1 {
		t.Fatalf("verdicts %+v, want the step", out.verdicts)
	}
	if c := out.verdicts[0].Case.(*MemoryCase); c.Step == nil || c.Step.Low/c.Step.First < 4 {
		t.Errorf("step %+v, want 150 MiB -> 650 MiB", c.Step)
	}
}
