package report

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func TestPickExtremes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 10000
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = math.Sin(float64(i) / 50)
	}
	vals[4321] = 100  // a one-sample spike
	vals[7777] = -100 // and a one-sample dip
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	v := func(i int) float64 { return vals[i] }
	for _, buckets := range []int{10, 100, 2000, 5000, 6000} {
		idx := pickExtremes(n, at, v, at(0), at(n-1), buckets)
		if buckets*2 >= n {
			if len(idx) != n {
				t.Errorf("buckets %d: kept %d of %d, want all", buckets, len(idx), n)
			}
			continue
		}
		if len(idx) > 2*buckets {
			t.Errorf("buckets %d: kept %d points, want at most %d", buckets, len(idx), 2*buckets)
		}
		if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) {
			t.Errorf("buckets %d: indices not ascending and unique", buckets)
		}
		if !slices.Contains(idx, 4321) || !slices.Contains(idx, 7777) {
			t.Errorf("buckets %d: the spike or the dip was dropped", buckets)
		}
	}
}

func TestJoin(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := func(s int, v float64) evidence.Point {
		return evidence.Point{T: t0.Add(time.Duration(s) * time.Second), V: v}
	}
	xs, vals := join([]evidence.Point{p(0, 1), p(2, 3)}, []evidence.Point{p(1, 10), p(2, 20)})
	if len(xs) != 3 {
		t.Fatalf("times %v, want 3", xs)
	}
	want := [][]float64{{1, math.NaN(), 3}, {math.NaN(), 10, 20}}
	for k := range want {
		for i := range want[k] {
			g, w := vals[k][i], want[k][i]
			if !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("series %d at %d: %v, want %v", k, i, g, w)
			}
		}
	}
}

func TestNumsJSON(t *testing.T) {
	b, err := json.Marshal(nums{[]float64{1.23456, math.NaN(), -0.0001, 1e9, math.Inf(1)}, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "[1.235,null,0,1000000000,null]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
