package rule

import (
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// maxTrendPoints bounds the trend tests' O(n²) work: longer series are reduced to this many
// bucket medians first.
const maxTrendPoints = 240

// fit is a robust estimate of how a series moves over time.
type fit struct {
	N           int
	Slope       float64 // Theil-Sen: the median of the pairwise slopes, units per second
	Intercept   float64 // value at the first point's time on the fitted line
	Z           float64 // Mann-Kendall's normalised S statistic
	P           float64 // one-sided p-value for an upward trend
	Tau         float64 // Kendall's tau: S over the number of pairs, -1 (always falling) to 1 (always rising)
	First, Last float64 // the fitted line's values at the first and last points
	Span        time.Duration
}

// Increasing reports an upward trend significant at level alpha.
func (t fit) Increasing(alpha float64) bool { return t.N >= 6 && t.Slope > 0 && t.P < alpha }

// trend fits a series with Theil-Sen and tests it with Mann-Kendall.
func trend(pts []facts.Point) fit {
	pts = reduce(pts, maxTrendPoints)
	n := len(pts)
	tr := fit{N: n, P: 1}
	if n < 3 {
		return tr
	}
	t0 := pts[0].T
	x := make([]float64, n)
	for i, p := range pts {
		x[i] = p.T.Sub(t0).Seconds()
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	var s float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := pts[j].V - pts[i].V
			s += sign(d)
			if dx := x[j] - x[i]; dx > 0 {
				slopes = append(slopes, d/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return tr
	}
	tr.Slope = facts.Median(slopes)
	tr.Tau = s / float64(n*(n-1)/2)
	ints := make([]float64, n)
	for i, p := range pts {
		ints[i] = p.V - tr.Slope*x[i]
	}
	tr.Intercept = facts.Median(ints)
	tr.First = tr.Intercept
	tr.Last = tr.Intercept + tr.Slope*x[n-1]
	tr.Span = pts[n-1].T.Sub(t0)
	// Mann-Kendall, with the variance corrected for ties (truncated MiB values tie often).
	vs := facts.Values(pts)
	slices.Sort(vs)
	variance := float64(n*(n-1)*(2*n+5)) / 18
	for i := 0; i < n; {
		j := i
		for j < n && vs[j] == vs[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			variance -= t * (t - 1) * (2*t + 5) / 18
		}
		i = j
	}
	if variance <= 0 {
		return tr
	}
	if ties := variance != float64(n*(n-1)*(2*n+5))/18; !ties && n <= exactMKMax {
		// Few readings: the normal approximation overstates p (5 readings that only rise have
		// p = 1/120, not 0.014); the exact distribution of S over all orderings is cheap.
		tr.Z = (s - math.Copysign(1, s)) / math.Sqrt(variance)
		tr.P = exactMKP(n, s)
		return tr
	}
	switch {
	case s > 0:
		tr.Z = (s - 1) / math.Sqrt(variance)
	case s < 0:
		tr.Z = (s + 1) / math.Sqrt(variance)
	}
	tr.P = 0.5 * math.Erfc(tr.Z/math.Sqrt2)
	return tr
}

// exactMKMax is the most readings whose Mann-Kendall p-value is computed exactly.
const exactMKMax = 10

// exactMKP is the exact one-sided p-value P(S >= s) of Mann-Kendall's statistic for n
// readings without ties: S = pairs - 2 x inversions, and the number of orderings of n values
// with k inversions follows the Mahonian recurrence.
func exactMKP(n int, s float64) float64 {
	pairs := n * (n - 1) / 2
	counts := make([]float64, pairs+1) // orderings of the first m values by inversions
	counts[0] = 1
	total := 1.0
	for m := 2; m <= n; m++ {
		next := make([]float64, pairs+1)
		for k, c := range counts {
			if c == 0 {
				continue
			}
			for j := 0; j < m && k+j <= pairs; j++ { // the m-th value adds j inversions
				next[k+j] += c
			}
		}
		counts = next
		total *= float64(m)
	}
	// S >= s  <=>  inversions <= (pairs - s) / 2.
	maxInv := int(math.Floor((float64(pairs) - s) / 2))
	var hit float64
	for k := 0; k <= maxInv && k <= pairs; k++ {
		hit += counts[k]
	}
	return hit / total
}

// reduce returns at most max points: the median value of equal-time buckets, placed at
// each bucket's median time.
func reduce(pts []facts.Point, max int) []facts.Point {
	if len(pts) <= max {
		return pts
	}
	start := pts[0].T
	span := pts[len(pts)-1].T.Sub(start)
	if span <= 0 {
		return pts[:max]
	}
	out := make([]facts.Point, 0, max)
	var bucket []facts.Point
	cur := 0
	for _, p := range pts {
		i := min(int(float64(p.T.Sub(start))/float64(span)*float64(max)), max-1)
		if i != cur && len(bucket) > 0 {
			out = append(out, facts.Point{T: bucket[len(bucket)/2].T, V: facts.Median(facts.Values(bucket)), Src: bucket[0].Src})
			bucket = bucket[:0]
		}
		cur = i
		bucket = append(bucket, p)
	}
	return append(out, facts.Point{T: bucket[len(bucket)/2].T, V: facts.Median(facts.Values(bucket)), Src: bucket[0].Src})
}

func sign(d float64) float64 {
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}
