package facts

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	vs := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{0: 1, 50: 3, 100: 5, 25: 2, 99: 4.96} {
		if got := Percentile(vs, p); math.Abs(got-want) > 1e-9 {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}
