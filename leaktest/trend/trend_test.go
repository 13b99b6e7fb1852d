package trend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// series is n readings every step positions, valued f(i).
func series(n int, step int64, f func(i int) float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{At: int64(i) * step, V: f(i)}
	}
	return pts
}

func TestOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sec := int64(time.Second)
	for _, tc := range []struct {
		name      string
		pts       []Point
		unit      int64
		up        bool
		slope     float64 // expected, per unit
		tolerance float64
	}{
		{"clean line in time", series(60, sec, func(i int) float64 { return 100 + 2*float64(i) }), sec, true, 2, 1e-9},
		// Noise ten times the per-step growth, and outliers: Theil-Sen shrugs them off.
		{"noisy growth", series(120, sec, func(i int) float64 {
			v := 1000 + 5*float64(i) + rng.NormFloat64()*50
			if i%17 == 0 {
				v += 2000
			}
			return v
		}), sec, true, 5, 1},
		{"flat with noise", series(120, sec, func(i int) float64 { return 1000 + rng.NormFloat64()*50 }), sec, false, 0, 2},
		{"sawtooth", series(120, sec, func(i int) float64 { return float64(i%10) * 100 }), sec, false, 0, 1},
		{"decline", series(60, sec, func(i int) float64 { return 500 - float64(i) }), sec, false, -1, 1e-9},
		{"ties (truncated MiB)", series(60, sec, func(i int) float64 { return float64(i / 10) }), sec, true, 0.1, 0.1},
		{"long series is reduced", series(5000, sec/10, func(i int) float64 { return 3 * float64(i) }), sec, true, 30, 0.5},
		// A test's rounds: 1000 calls each, 48 bytes kept per call.
		{"bytes per call", series(12, 1000, func(i int) float64 { return 1<<20 + 48*1000*float64(i) }), 1, true, 48, 1e-9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Of(tc.pts, tc.unit)
			if got := f.Increasing(0.01); got != tc.up {
				t.Errorf("Increasing = %v (slope %.3f, Z %.2f, p %.4f), want %v", got, f.Slope, f.Z, f.P, tc.up)
			}
			if math.Abs(f.Slope-tc.slope) > tc.tolerance {
				t.Errorf("slope %.3f, want %.3f ± %.3f", f.Slope, tc.slope, tc.tolerance)
			}
			if f.N > MaxPoints {
				t.Errorf("N = %d > %d", f.N, MaxPoints)
			}
		})
	}
}

// Units computes seconds from nanoseconds exactly as time.Duration.Seconds does: the
// diagnosis's slopes did not change by a bit when it moved here.
func TestUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		d := rng.Int64N(1 << 50)
		if got, want := Units(d, int64(time.Second)), time.Duration(d).Seconds(); got != want {
			t.Fatalf("Units(%d, 1e9) = %v, time.Duration.Seconds %v", d, got, want)
		}
		if got := Units(d, 1); got != float64(d) {
			t.Fatalf("Units(%d, 1) = %v", d, got)
		}
	}
}

// The exact Mann-Kendall p-values of small samples without ties, against the counts of
// permutations by inversions (Mahonian numbers, OEIS A008302).
func TestExactMKP(t *testing.T) {
	for _, tc := range []struct {
		n    int
		s    float64
		want float64
	}{
		{3, 3, 1.0 / 6},  // one ordering of 6 rises throughout
		{4, 6, 1.0 / 24}, // one of 24
		{4, 4, 4.0 / 24}, // 1 + 3 orderings with at most one inversion
		{5, 10, 1.0 / 120},
		{5, 8, 5.0 / 120},  // 1 + 4
		{5, 6, 14.0 / 120}, // 1 + 4 + 9
		{10, 45, 1.0 / 3628800},
		{5, -10, 1},
	} {
		if got := exactMKP(tc.n, tc.s); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("exactMKP(%d, %g) = %g, want %g", tc.n, tc.s, got, tc.want)
		}
	}
	// Large samples agree with the normal approximation the trend test uses beyond exactMKMax.
	n, s := 10, 25.0
	variance := float64(n*(n-1)*(2*n+5)) / 18
	approx := 0.5 * math.Erfc((s-1)/math.Sqrt(variance)/math.Sqrt2)
	if got := exactMKP(n, s); math.Abs(got-approx) > 0.01 {
		t.Errorf("exactMKP(10, 25) = %g, the normal approximation %g", got, approx)
	}
}

// A steady growth goes on to the end; a step, or a cache that fills and stops, does not.
func TestLateMeasures(t *testing.T) {
	for _, tc := range []struct {
		name               string
		pts                []Point
		ratioMin, ratioMax float64
		shareMin, shareMax float64
	}{
		{"steady", series(12, 100, func(i int) float64 { return 10 * float64(i) }), 0.9, 1.1, 0.4, 0.6},
		{"step early", series(12, 100, func(i int) float64 { return 100 * float64(min(i, 3)) }), -0.01, 0.01, -0.01, 0.01},
		// A cache filling up: its late slope is well under the half of the whole series's that
		// the diagnosis calls still rising.
		{"filling up", series(12, 100, func(i int) float64 { return 1000 * (1 - math.Exp(-float64(i)/2)) }), 0, 0.4, 0, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Of(tc.pts, 1)
			n := len(tc.pts)
			ratio := LateRatio(tc.pts, f.Slope, 1)
			share := LateShare(tc.pts, tc.pts[0].V, tc.pts[n-1].V)
			if ratio < tc.ratioMin || ratio > tc.ratioMax {
				t.Errorf("late ratio %.3f, want %.2f..%.2f", ratio, tc.ratioMin, tc.ratioMax)
			}
			if share < tc.shareMin || share > tc.shareMax {
				t.Errorf("late share %.3f, want %.2f..%.2f", share, tc.shareMin, tc.shareMax)
			}
		})
	}
}

func TestScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pts := series(200, 1, func(i int) float64 { return 3*float64(i) + rng.NormFloat64()*10 })
	if s := Scatter(pts, Of(pts, 1), 0, 1); s < 8 || s > 12 {
		t.Errorf("scatter %.2f of a line with noise of standard deviation 10", s)
	}
	line := series(20, 1, func(i int) float64 { return float64(i) })
	if s := Scatter(line, Of(line, 1), 4, 1); s != 2 {
		t.Errorf("scatter %g of an exact line in values of resolution 4, want 2 (half the resolution)", s)
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 50, 7},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{4, 1, 3, 2}, 50, 2.5},
		{[]float64{1, 2, 3, 4, 5}, 100, 5},
		{[]float64{1, 2, 3, 4, 5}, 25, 2},
	} {
		if got := Percentile(tc.vs, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %g) = %g, want %g", tc.vs, tc.p, got, tc.want)
		}
	}
}
