package sim

import "testing"

// A leak the diagnosis missed is excused only when it is slower than the detection limit the
// diagnosis itself stated for the window; otherwise it is a miss.
func TestScoreBelowTheStatedLimit(t *testing.T) {
	const mib = 1 << 20
	tr := Truth{Kinds: []string{KindHeapLeak}, Culprits: map[string]string{KindHeapLeak: "svc.leak"},
		Params: Params{LeakRate: 1 * mib / 60}} // 1 MiB/min
	spec := Spec{Shape: HeapLeak, Vantage: Run}
	for _, tc := range []struct {
		name   string
		found  []Finding
		limits map[string]float64
		right  bool
		fn     int
		below  int
	}{
		{"missed, faster than the stated limit", nil, map[string]float64{KindHeapLeak: 0.5 * mib}, false, 1, 0},
		{"missed, no limit stated", nil, nil, false, 1, 0},
		{"missed, slower than the stated limit", nil, map[string]float64{KindHeapLeak: 5 * mib}, true, 0, 1},
		{"found anyway", []Finding{{Kind: KindHeapLeak, Warning: true, Culprits: []string{"svc.leak"}}}, map[string]float64{KindHeapLeak: 5 * mib}, true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScore()
			if got := s.Add(spec, tr, tc.found, tc.limits); got != tc.right {
				t.Errorf("right = %v, want %v (%v)", got, tc.right, s.Wrong)
			}
			ks := s.Kinds[KindHeapLeak]
			if ks.FN != tc.fn || ks.BelowLimit != tc.below {
				t.Errorf("FN %d, below the limit %d; want %d, %d", ks.FN, ks.BelowLimit, tc.fn, tc.below)
			}
		})
	}
}
