package facts

import (
	"slices"
	"testing"
	"time"
)

// gcSeries is a live heap read at each GC cycle (gctrace): cycles at the given seconds with
// the given MiB.
func gcSeries(at, mibs []float64) []Point {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var pts []Point
	for i, s := range at {
		pts = append(pts, Point{T: t0.Add(time.Duration(s * float64(time.Second))), V: mibs[i] * (1 << 20)})
	}
	return pts
}

// TestInBursts: a body read whole every 15 s on a service that does little else (the lab's
// firmware-upload under memdoctor run, and the simulator's bursts-in-gc): its GCs come in
// clusters inside each burst, each reading more of it, and none between bursts. The clusters'
// readings are inside a burst (the first of the second too: it stands above the low, and the
// next reading climbs a spike's height from it); the quiet ones are not, nor the first of the
// first cluster, whose next reading climbs less. A server whose GC runs every second all along, its readings swinging with the
// requests in flight, keeps its lows; a leak whose GCs grow rarer moves the heap too little
// from one cycle to the next to be a burst.
func TestInBursts(t *testing.T) {
	pts := gcSeries(
		[]float64{4.4, 9.8, 12.1, 12.2, 12.3, 12.4, 12.7, 13.2, 28.3, 28.7, 29.5, 44.9},
		[]float64{3, 3, 9, 19, 37, 72, 138, 261, 106, 195, 364, 299})
	out, n := inBursts(pts)
	if want := []float64{3, 3, 9, 299}; n != 8 || !slices.Equal(mibsOf(out), want) {
		t.Errorf("bursts: %d inside, kept %v MiB; want %v kept", n, mibsOf(out), want)
	}

	var at, v []float64
	for i := range 45 {
		at = append(at, float64(i))
		v = append(v, []float64{5, 17, 12, 25, 5, 12}[i%6]) // requests in flight at each GC
	}
	pts = gcSeries(at, v)
	if _, n := inBursts(pts); n != 0 {
		t.Errorf("a GC every second all along: %d readings inside bursts, want none", n)
	}

	pts = gcSeries([]float64{1, 1.5, 2, 2.5, 8, 16, 32, 60}, []float64{4, 5, 6, 7, 10, 16, 28, 50})
	if _, n := inBursts(pts); n != 0 {
		t.Errorf("a leak whose GCs grow rarer: %d readings inside bursts, want none", n)
	}
}

func mibsOf(pts []Point) []float64 {
	var out []float64
	for _, p := range pts {
		out = append(out, p.V/(1<<20))
	}
	return out
}

// TestGrowing: what a leak's site holds rises and stays; a burst's site, caught at one GC
// half-way and at another near its end, rises and falls.
func TestGrowing(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		held []float64
		want bool
	}{
		{[]float64{24, 31, 38, 45}, true},      // a cache that keeps every entry
		{[]float64{24, 31, 30.5, 45}, true},    // a sample's noise is no letting go
		{[]float64{140, 180, 141, 180}, false}, // one upload caught at two phases, twice
		{[]float64{28, 181, 211, 90}, false},   // rising bursts, then one caught early
		{[]float64{180, 180, 180}, false},      // the same burst again: never more than before
	} {
		var h []float64
		for _, v := range tc.held {
			h = append(h, v*mib)
		}
		if got := Growing(h); got != tc.want {
			t.Errorf("Growing(%v MiB) = %v, want %v", tc.held, got, tc.want)
		}
	}
}
