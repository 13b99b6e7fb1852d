package compare

import (
	"math"
	"testing"
)

// sampleWithU builds untied samples of n and m values whose U (of the first) is u: y is 1..m
// and each x sits just above c of them, the c summing to u (x's own values all differ).
func sampleWithU(n, m, u int) (x, y []float64) {
	c := make([]int, n)
	for i := n - 1; i >= 0 && u > 0; i-- {
		c[i] = min(m, u)
		u -= c[i]
	}
	for i, ci := range c {
		x = append(x, float64(ci)+0.5+float64(i)/1024)
	}
	for j := 1; j <= m; j++ {
		y = append(y, float64(j))
	}
	return x, y
}

// TestCriticalValues checks the exact distribution against the published table of critical
// values of U for a two-sided test at alpha 0.05 (the largest U whose p-value is at most
// 0.05; e.g. Zar, Biostatistical Analysis, table B.11; scipy.stats.mannwhitneyu's exact method
// gives the same): U = crit is significant, U = crit + 1 is not.
func TestCriticalValues(t *testing.T) {
	for _, tc := range []struct{ n, m, crit int }{
		{4, 4, 0}, {5, 5, 2}, {6, 6, 5}, {7, 7, 8}, {8, 8, 13}, {9, 9, 17}, {10, 10, 23},
		{11, 11, 30}, {12, 12, 37}, {13, 13, 45}, {14, 14, 55}, {15, 15, 64}, {16, 16, 75},
		{17, 17, 87}, {18, 18, 99}, {19, 19, 113}, {20, 20, 127},
		{3, 5, 0}, {3, 6, 1}, {3, 7, 1}, {3, 8, 2}, {3, 9, 2}, {3, 10, 3},
		{4, 5, 1}, {4, 6, 2}, {4, 7, 3}, {4, 8, 4}, {4, 9, 4}, {4, 10, 5},
		{5, 6, 3}, {5, 7, 5}, {5, 8, 6}, {5, 9, 7}, {5, 10, 8}, {2, 8, 0}, {2, 10, 0},
	} {
		x, y := sampleWithU(tc.n, tc.m, tc.crit)
		r := MannWhitney(x, y)
		if r.U != float64(tc.crit) || !r.Exact || r.P > 0.05 {
			t.Errorf("n=%d m=%d U=%v: p=%.5f exact=%v, want U=%d significant (exact)", tc.n, tc.m, r.U, r.P, r.Exact, tc.crit)
		}
		x, y = sampleWithU(tc.n, tc.m, tc.crit+1)
		if r := MannWhitney(x, y); r.P <= 0.05 {
			t.Errorf("n=%d m=%d U=%d: p=%.5f, want above 0.05", tc.n, tc.m, tc.crit+1, r.P)
		}
		// The other way round: the same p-value.
		if r2 := MannWhitney(y, x); math.Abs(r2.P-MannWhitney(x, y).P) > 1e-12 {
			t.Errorf("n=%d m=%d: p(x,y)=%v, p(y,x)=%v", tc.n, tc.m, MannWhitney(x, y).P, r2.P)
		}
	}
}

// TestKnownPValues checks p-values derived by hand (small samples), by enumerating every
// assignment of the pooled values (ties), and from scipy 1.10's mannwhitneyu (exact method
// without ties; asymptotic method with continuity correction beyond 50 values).
func TestKnownPValues(t *testing.T) {
	seq := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		// 3 against 3, fully apart: 2 of the C(6,3) = 20 arrangements are as extreme.
		{"3v3 apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 2.0 / 20, true},
		// 4 against 4, fully apart: 2 / C(8,4) = 2/70.
		{"4v4 apart", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 16, 2.0 / 70, true},
		// 3 against 4 with U = 1 (only 4 > 3): of the C(7,3) = 35 arrangements, U = 0 once
		// and U = 1 once: P(U <= 1) = 2/35, p = 4/35.
		{"3v4 U=1", []float64{1, 2, 4}, []float64{3, 5, 6, 7}, 1, 4.0 / 35, true},
		// scipy exact: U = 7, p = 6/7.
		{"3v4 scipy", []float64{1.5, 3.5, 4.5}, []float64{1, 2, 3, 5}, 7, 6.0 / 7, true},
		// scipy exact, 10 against 12: p = 0.042570432663311925.
		{"10v12 scipy", []float64{12, 15, 9, 22, 17, 30, 11, 19, 25, 14}, []float64{8, 10, 13, 7, 16, 6, 21, 5, 18, 4, 3, 20},
			91, 0.042570432663311925, true},
		// Ties, by hand: doubled midranks 2, 5, 5, 8; x takes {2, 5}: sum 7, and 2 of the 6
		// choices sum to 7 or less, all 6 to 7 or more: p = 2 x 2/6.
		{"ties by hand", []float64{1, 2}, []float64{2, 3}, 0.5, 2.0 / 3, true},
		// Ties, by enumerating the 462 assignments: 31 at or below, 440 at or above.
		{"ties 5v6", []float64{1, 1, 2, 3, 3}, []float64{2, 2, 3, 4, 4, 5}, 6, 2 * 31.0 / 462, true},
		// Ties, by enumerating the 24,310 assignments: 5,636 at or above.
		{"ties 8v9", []float64{5, 5, 5, 6, 6, 7, 7, 7}, []float64{4, 5, 5, 5, 6, 6, 6, 6, 7}, 45, 2 * 5636.0 / 24310, true},
		// Normal approximation with ties, by hand: midranks 23 and 53, R1 = 690, U = 225,
		// sigma^2 = 900/12 x (61 - (45^3-45 + 15^3-15)/(60 x 59)) = 2574.15, z = 224.5/50.736;
		// scipy: 9.650634438958921e-06.
		{"ties30 normal", seq(30, func(int) float64 { return 1 }), seq(30, func(i int) float64 { return float64(1 + i/15) }),
			225, 9.650634438958921e-06, false},
		// scipy asymptotic: 0.0049255276150175775.
		{"mod normal", seq(30, func(i int) float64 { return float64(i % 7) }), seq(28, func(i int) float64 { return float64(i%9 + 1) }),
			240, 0.0049255276150175775, false},
		// scipy asymptotic, no ties: 0.004970189077531398.
		{"shift normal", seq(40, func(i int) float64 { return float64(i) }), seq(35, func(i int) float64 { return float64(i) + 10.5 }),
			435, 0.004970189077531398, false},
	} {
		r := MannWhitney(tc.x, tc.y)
		if r.U != tc.u || r.Exact != tc.exact || math.Abs(r.P-tc.p) > 1e-9*math.Max(1, tc.p) && math.Abs(r.P-tc.p)/tc.p > 1e-9 {
			t.Errorf("%s: U=%v p=%.12g exact=%v, want U=%v p=%.12g exact=%v", tc.name, r.U, r.P, r.Exact, tc.u, tc.p, tc.exact)
		}
	}
}

// TestExactAgreesWithNormal: where both apply, the exact p-value and the normal approximation
// agree closely (the approximation is what serves beyond 50 values).
func TestExactAgreesWithNormal(t *testing.T) {
	for _, u := range []int{100, 127, 150, 180} {
		x, y := sampleWithU(20, 20, u)
		r := MannWhitney(x, y)
		groups, _ := rank(x, y)
		approx := normalP(20, 20, groups, r.U)
		if !r.Exact || math.Abs(math.Log(r.P/approx)) > 0.2 {
			t.Errorf("20v20 U=%d: exact %.5f, normal %.5f", u, r.P, approx)
		}
	}
}

func TestDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"empty", nil, []float64{1, 2}},
		{"all equal", []float64{3, 3, 3, 3}, []float64{3, 3, 3, 3, 3}},
		{"NaN only", []float64{math.NaN()}, []float64{1, 2}},
	} {
		if r := MannWhitney(tc.x, tc.y); r.P != 1 {
			t.Errorf("%s: p = %v, want 1", tc.name, r.P)
		}
	}
	// NaNs are left out: the result equals that without them.
	a := MannWhitney([]float64{1, math.NaN(), 2, 3}, []float64{4, 5, 6})
	b := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if a != b {
		t.Errorf("with NaN %+v, without %+v", a, b)
	}
}

// TestMinPAndNeeded: the smallest p-value is 2/C(n1+n2, n1), so at alpha 0.05 four values a
// side is the least that can show anything (2/70 = 0.029; three give 0.1), and a side of
// two needs eight on the other (2/45 = 0.044; seven give 2/36 = 0.056).
func TestMinPAndNeeded(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		minP   float64
	}{
		{3, 3, 0.1}, {4, 4, 2.0 / 70}, {3, 4, 2.0 / 35}, {3, 5, 2.0 / 56}, {2, 8, 2.0 / 45}, {1, 39, 0.05}, {0, 5, 1}, {1, 1, 1},
	} {
		if got := MinP(tc.n1, tc.n2); math.Abs(got-tc.minP) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %v, want %v", tc.n1, tc.n2, got, tc.minP)
		}
	}
	// MinP is what the test reaches on fully separated samples.
	for _, n := range [][2]int{{3, 3}, {4, 4}, {3, 5}, {2, 8}, {5, 7}} {
		x, y := sampleWithU(n[0], n[1], 0)
		if p := MannWhitney(x, y).P; math.Abs(p-MinP(n[0], n[1])) > 1e-12 {
			t.Errorf("%v apart: p = %v, MinP = %v", n, p, MinP(n[0], n[1]))
		}
	}
	for _, tc := range []struct{ n1, n2, w1, w2 int }{
		{3, 3, 4, 4}, {0, 0, 4, 4}, {2, 2, 4, 4}, {4, 4, 4, 4}, {10, 2, 10, 2}, {2, 3, 4, 4}, {6, 1, 6, 3}, {1, 30, 2, 30},
	} {
		g1, g2 := Needed(tc.n1, tc.n2, 0.05)
		if g1 != tc.w1 || g2 != tc.w2 {
			t.Errorf("Needed(%d, %d) = %d, %d, want %d, %d", tc.n1, tc.n2, g1, g2, tc.w1, tc.w2)
		}
	}
}
