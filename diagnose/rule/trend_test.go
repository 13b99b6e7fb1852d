package rule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func series(n int, step time.Duration, f func(i int) float64) []evidence.Point {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pts := make([]evidence.Point, n)
	for i := range pts {
		pts[i] = evidence.Point{T: t0.Add(time.Duration(i) * step), V: f(i)}
	}
	return pts
}

func TestTrend(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name      string
		pts       []evidence.Point
		up        bool
		slope     float64 // expected, per second
		tolerance float64
	}{
		{"clean line", series(60, time.Second, func(i int) float64 { return 100 + 2*float64(i) }), true, 2, 1e-9},
		// Noise ten times the per-step growth, and outliers: Theil-Sen shrugs them off.
		{"noisy growth", series(120, time.Second, func(i int) float64 {
			v := 1000 + 5*float64(i) + rng.NormFloat64()*50
			if i%17 == 0 {
				v += 2000
			}
			return v
		}), true, 5, 1},
		{"flat with noise", series(120, time.Second, func(i int) float64 { return 1000 + rng.NormFloat64()*50 }), false, 0, 2},
		{"sawtooth", series(120, time.Second, func(i int) float64 { return float64(i%10) * 100 }), false, 0, 1},
		{"decline", series(60, time.Second, func(i int) float64 { return 500 - float64(i) }), false, -1, 1e-9},
		{"ties (truncated MiB)", series(60, time.Second, func(i int) float64 { return float64(i / 10) }), true, 0.1, 0.1},
		{"long series is reduced", series(5000, 100*time.Millisecond, func(i int) float64 { return 3 * float64(i) }), true, 30, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := trend(tc.pts)
			if got := tr.Increasing(0.01); got != tc.up {
				t.Errorf("Increasing = %v (slope %.3f, Z %.2f, p %.4f), want %v", got, tr.Slope, tr.Z, tr.P, tc.up)
			}
			if math.Abs(tr.Slope-tc.slope) > tc.tolerance {
				t.Errorf("slope %.3f, want %.3f ± %.3f", tr.Slope, tc.slope, tc.tolerance)
			}
			if tr.N > maxTrendPoints {
				t.Errorf("N = %d > %d", tr.N, maxTrendPoints)
			}
		})
	}
}

// The readings every 10 s of a window that lasts a few milliseconds longer than 60 s: the
// middle one (30 s) is a few milliseconds before the window's middle, and is the middle
// reading all the same; the next one (40 s) would make a steady climb look half done.
func TestLateShareNearestMiddle(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var pts []evidence.Point
	for i, v := range []float64{14, 42, 56, 74, 96, 110, 120} {
		pts = append(pts, evidence.Point{T: t0.Add(time.Duration(i)*10*time.Second + time.Duration(i/6)*7*time.Millisecond), V: v})
	}
	if got, want := lateShare(pts, 14, 120), (120-74)/(120-14.0); math.Abs(got-want) > 1e-9 {
		t.Errorf("late share %.3f, want %.3f (from the 30 s reading)", got, want)
	}
}
