package rule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSequentialFalseAlarm: readings with no trend, judged after every reading as they come
// in (a watch that looks more often than readings come), cross the boundary at some look at
// most Trend.FalseAlarm of the time. Each family is exchangeable (any order of its values as
// likely as any other): Gaussian noise, heavy tails, whole-MiB readings full of ties (what
// gctrace prints), a small count (a goroutine count whose readings repeat), and a real leak's
// readings in a random order. A level of 0.01 at every look (the rule before) crosses 4.4% of
// the time (Gaussian) and fails this test.
func TestSequentialFalseAlarm(t *testing.T) {
	tr := Default.Trend
	trials, n := 40000, 60
	if testing.Short() {
		trials = 10000
	}
	families := []struct {
		name string
		draw func(r *rand.Rand, i int) float64
	}{
		{"gaussian", func(r *rand.Rand, _ int) float64 { return 100 + r.NormFloat64() }},
		{"heavy tails (Cauchy)", func(r *rand.Rand, _ int) float64 { return 100 + math.Tan(math.Pi*(r.Float64()-0.5)) }},
		{"whole MiB", func(r *rand.Rand, _ int) float64 { return math.Round(100 + 1.5*r.NormFloat64()) }},
		{"a small count", func(r *rand.Rand, _ int) float64 { return float64(40 + r.IntN(4)) }},
		{"a leak shuffled", nil},
	}
	for _, fam := range families {
		t.Run(fam.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(24, 1))
			vals := make([]float64, n)
			alarms := 0
			for range trials {
				if fam.draw == nil {
					for i := range vals {
						vals[i] = 20<<20 + float64(i)*(1<<20) + r.NormFloat64()*(1<<19)
					}
					r.Shuffle(n, func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
				} else {
					for i := range vals {
						vals[i] = fam.draw(r, i)
					}
				}
				pts := series(n, time.Second, func(i int) float64 { return vals[i] })
				var s float64 // Mann-Kendall's S, kept up to date to skip the looks where tau is short
				for k := 1; k <= n; k++ {
					for i := range k - 1 {
						s += sign(vals[k-1] - vals[i])
					}
					if k < tr.MinConfirmPoints || s < tr.ConfirmTau*float64(k*(k-1)/2) {
						continue
					}
					if f := trend(pts[:k]); tr.crosses(f.N, f.Tau, f.P) {
						alarms++
						break
					}
				}
			}
			rate := float64(alarms) / float64(trials)
			t.Logf("%d of %d trendless series crossed at some look of %d: %.4f (stated %.3f)", alarms, trials, n-tr.MinConfirmPoints+1, rate, tr.FalseAlarm)
			if rate > tr.FalseAlarm {
				t.Errorf("false-alarm rate %.4f over every look, above the stated %.3f", rate, tr.FalseAlarm)
			}
		})
	}
}

// The boundary lets five readings that only rise cross it, and not four; six with one pair out
// of order and seven with two, as a level of 0.01 did.
func TestBoundary(t *testing.T) {
	tr := Default.Trend
	rise := func(n int) fit { return trend(series(n, 5*time.Second, func(i int) float64 { return float64(i) })) }
	if f := rise(5); !tr.crosses(f.N, f.Tau, f.P) {
		t.Errorf("five readings that only rise (p %.4g) do not cross the boundary %.4g", f.P, tr.boundary(5))
	}
	if f := rise(4); tr.crosses(f.N, f.Tau, f.P) {
		t.Errorf("four readings (p %.4g) cross the boundary", f.P)
	}
	swapped := func(n, k int) fit { // n readings rising but for k pairs out of order
		return trend(series(n, 5*time.Second, func(i int) float64 {
			if i < 2*k {
				return float64(i ^ 1) // swap neighbours: one inversion each
			}
			return float64(i)
		}))
	}
	for _, c := range []struct{ n, k int }{{6, 1}, {7, 2}} {
		if f := swapped(c.n, c.k); !tr.crosses(f.N, f.Tau, f.P) {
			t.Errorf("%d readings with %d pairs out of order (p %.4g) do not cross the boundary %.4g", c.n, c.k, f.P, tr.boundary(c.n))
		}
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.998, 1 - 1e-6} {
		if z := normalQuantile(q); math.Abs(0.5*math.Erfc(-z/math.Sqrt2)-q) > 1e-9 {
			t.Errorf("normalQuantile(%g) = %g: Φ of it is %g", q, z, 0.5*math.Erfc(-z/math.Sqrt2))
		}
	}
}

// sign is -1, 0 or 1 as d is negative, zero or positive.
func sign(d float64) float64 {
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}
