package compare

import (
	"math"
	"slices"
)

// UTest is the result of a two-sided Mann-Whitney U test (the Wilcoxon rank-sum test): do the
// values of one sample tend to be larger than those of the other? It assumes nothing of their
// distribution, only that the values are independent.
type UTest struct {
	N1, N2 int
	// U is the first sample's statistic: the pairs (x, y) with x > y, a tie counting one
	// half. It runs from 0 (every x below every y) to N1 x N2; N1 x N2 / 2 is no tendency.
	U float64
	// P is the two-sided p-value: how often samples as different as these would arise if both
	// came from one distribution. 1 when either sample is empty or every value is equal.
	P float64
	// Exact is true when P comes from the exact distribution of U (ties included), false when
	// it comes from the normal approximation.
	Exact bool
}

// exactLimit is the largest total sample size whose p-value is computed exactly: beyond it the
// normal approximation (with continuity and tie corrections) is within a few percent of the
// exact p-value, and the exact distribution would take memory in proportion to N^3.
const exactLimit = 50

// MannWhitney tests whether x and y come from one distribution against the alternative that
// the values of one tend to be larger. For N1 + N2 <= 50 the p-value is exact: the
// permutation distribution of the rank sum given the ties, as in StatXact or Mehta & Patel;
// beyond, the normal approximation with the tie-corrected variance and a continuity
// correction (as R's wilcox.test and scipy.stats.mannwhitneyu). NaNs are left out.
func MannWhitney(x, y []float64) UTest {
	x, y = withoutNaN(x), withoutNaN(y)
	r := UTest{N1: len(x), N2: len(y), P: 1}
	if r.N1 == 0 || r.N2 == 0 {
		return r
	}
	groups, r1 := rank(x, y)
	n1, n2 := float64(r.N1), float64(r.N2)
	r.U = r1 - n1*(n1+1)/2
	if len(groups) == 1 {
		return r // every value is equal: no evidence of any difference
	}
	if r.N1+r.N2 <= exactLimit {
		// Count the smaller sample's rank sum: the two sums add up to N(N+1)/2, so the
		// two-sided p-value is the same, and the table is smaller.
		if r.N1 > r.N2 {
			n := n1 + n2
			r.P = exactP(r.N2, r.N1, groups, n*(n+1)/2-r1)
		} else {
			r.P = exactP(r.N1, r.N2, groups, r1)
		}
		r.Exact = true
	} else {
		r.P = normalP(r.N1, r.N2, groups, r.U)
	}
	return r
}

// tieGroup is a run of equal values in the pooled, sorted samples.
type tieGroup struct {
	size int
	// rank2 is twice the group's midrank (an integer: ranks lo..hi average (lo+hi)/2).
	rank2 int
}

// rank pools x and y, sorts them, and returns the tie groups in order and the sum of x's
// (mid)ranks.
func rank(x, y []float64) ([]tieGroup, float64) {
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var groups []tieGroup
	var r1 float64
	for i := 0; i < len(all); {
		j, inX := i, 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].first {
				inX++
			}
		}
		g := tieGroup{size: j - i, rank2: (i + 1) + j} // ranks i+1 .. j
		groups = append(groups, g)
		r1 += float64(inX*g.rank2) / 2
		i = j
	}
	return groups, r1
}

// exactP is the two-sided p-value of x's rank sum r1 under the permutation distribution given
// the ties: every way of choosing which n1 of the pooled values are x's is equally likely.
// The distribution of twice the rank sum is counted by dynamic programming over the tie
// groups: a group of size t contributes c x rank2 in C(t, c) ways when c of its values are
// x's. The p-value is twice the smaller tail (capped at 1), as R and scipy compute it.
func exactP(n1, n2 int, groups []tieGroup, r1 float64) float64 {
	n := n1 + n2
	maxW := n1 * (2*n - n1 + 1) // twice the largest possible rank sum of n1 values
	width := maxW + 1
	cur := make([]float64, (n1+1)*width)
	next := make([]float64, len(cur))
	cur[0] = 1
	var weights []float64
	for _, g := range groups {
		weights = weights[:0]
		for c := 0; c <= g.size; c++ {
			weights = append(weights, binomial(g.size, c))
		}
		clear(next)
		for k := 0; k <= n1; k++ {
			row := cur[k*width : (k+1)*width]
			for w, ways := range row {
				if ways == 0 {
					continue
				}
				for c := 0; c <= g.size && k+c <= n1; c++ {
					next[(k+c)*width+w+c*g.rank2] += ways * weights[c]
				}
			}
		}
		cur, next = next, cur
	}
	dist := cur[n1*width : (n1+1)*width]
	obs := int(math.Round(2 * r1))
	var below, above, total float64
	for w, ways := range dist {
		total += ways
		if w <= obs {
			below += ways
		}
		if w >= obs {
			above += ways
		}
	}
	return math.Min(1, 2*math.Min(below, above)/total)
}

// normalP is the two-sided p-value of U from the normal approximation: mean n1 n2 / 2,
// variance n1 n2 / 12 x ((N+1) - sum(t^3 - t) / (N (N-1))) over the tie groups' sizes t, and a
// continuity correction of one half.
func normalP(n1, n2 int, groups []tieGroup, u float64) float64 {
	a, b := float64(n1), float64(n2)
	n := a + b
	var ties float64
	for _, g := range groups {
		t := float64(g.size)
		ties += t*t*t - t
	}
	sigma := math.Sqrt(a * b / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-a*b/2) - 0.5) / sigma
	if z <= 0 {
		return 1
	}
	return math.Erfc(z / math.Sqrt2)
}

// MinP is the smallest two-sided p-value a Mann-Whitney U test of samples of n1 and n2 values
// can give: 2 / C(n1+n2, n1), when every value of one sample lies beyond every value of the
// other (ties only make it larger). With MinP above alpha, no data of that size can ever show
// a difference: that is "too little data", not "no change".
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	return math.Min(1, 2/binomial(n1+n2, n1))
}

// Needed returns, for samples of n1 and n2 values whose MinP is above alpha, how many values
// each would need for a difference to be detectable at alpha, adding one value at a time to
// the smaller side (from 3 and 3: 4 and 4 at alpha 0.05; from 6 and 1: 6 and 3). It returns
// n1, n2 when they already suffice.
func Needed(n1, n2 int, alpha float64) (int, int) {
	n1, n2 = max(n1, 1), max(n2, 1)
	for MinP(n1, n2) > alpha {
		if n1 <= n2 {
			n1++
		} else {
			n2++
		}
	}
	return n1, n2
}

// binomial is C(n, k) as a float64 (exact up to 2^53, then correctly rounded).
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	r := 1.0
	for i := 1; i <= k; i++ {
		r = math.Round(r * float64(n-k+i) / float64(i)) // C(n-k+i, i): a whole number
	}
	return r
}

func withoutNaN(v []float64) []float64 {
	if !slices.ContainsFunc(v, math.IsNaN) {
		return v
	}
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
