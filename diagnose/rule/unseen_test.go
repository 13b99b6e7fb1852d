package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// A rule that saw no growth does not call healthy a window whose end its source never showed
// (a starved service's agent stopped answering): it says it could not judge, and why. An end
// read by another series of the source (the heap in use between GCs), or a short tail, is
// judged as before.
func TestEndUnseenIsNotHealthy(t *testing.T) {
	flat := make([]float64, 20) // 20 readings 2 s apart: 38 s
	for i := range flat {
		flat[i] = 20
	}
	at := func(s time.Duration) time.Time { return t0.Add(s) }
	inUse := func(until time.Duration) facts.Series {
		var s facts.Series
		for d := time.Duration(0); d <= until; d += 2 * time.Second {
			s.Points = append(s.Points, facts.Point{T: at(d), V: 30 << 20})
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		end    time.Duration
		inUse  time.Duration // the heap in use read until then (0: never)
		unseen bool
	}{
		{"the source stopped at 38 s of 120 s", 120 * time.Second, 0, true},
		{"the heap in use read to the end", 120 * time.Second, 118 * time.Second, false},
		{"a tail shorter than a quarter of the window", 48 * time.Second, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := liveFacts(flat...)
			f.End = at(tc.end)
			if tc.inUse > 0 {
				f.HeapInUse = inUse(tc.inUse)
			}
			out := heapLeak(f, &Default)
			u := out.unjudged
			if got := u != nil && u.Why == WhyEndUnseen; got != tc.unseen {
				t.Fatalf("heap-leak unjudged %+v, limits %+v: end unseen %v, want %v", u, out.limits, got, tc.unseen)
			}
			if tc.unseen && (u.N != 20 || u.Value < 80 || len(out.verdicts)+len(out.limits) > 0) {
				t.Errorf("unjudged %+v, verdicts %+v, limits %+v: want 20 readings, 82 s unseen, no verdict and no limit", u, out.verdicts, out.limits)
			}
			if !tc.unseen && (len(out.limits) != 1 || len(out.verdicts) > 0) {
				t.Errorf("limits %+v, verdicts %+v: want the detection limit", out.limits, out.verdicts)
			}

			g := goroutineFacts(flat, f.End)
			gout := goroutineLeak(g, &Default)
			if tc.inUse > 0 { // the goroutines' own series decides for them
				return
			}
			if got := gout.unjudged != nil && gout.unjudged.Why == WhyEndUnseen; got != tc.unseen || len(gout.verdicts) > 0 {
				t.Errorf("goroutine-leak unjudged %+v, verdicts %+v: end unseen %v, want %v", gout.unjudged, gout.verdicts, got, tc.unseen)
			}
		})
	}
}

// goroutineFacts is a goroutine count read every 2 s, as its own floor, in a window ending at end.
func goroutineFacts(counts []float64, end time.Time) *facts.Facts {
	var pts []facts.Point
	for i, v := range counts {
		pts = append(pts, facts.Point{T: t0.Add(time.Duration(i) * 2 * time.Second), V: v * 100, Src: facts.SourceRuntimeMetrics})
	}
	f := &facts.Facts{Start: t0, End: end, Goroutines: facts.Series{Points: pts, Src: facts.SourceRuntimeMetrics}}
	f.Goroutine.Floor = pts
	return f
}
