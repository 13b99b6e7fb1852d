// Package trend holds the growth statistics that memdoctor's diagnosis and leaktest share: a
// robust fit of how a series moves (Theil-Sen's slope, Kendall's tau and Mann-Kendall's test,
// exact for short series without ties), and the measures of whether a growth still goes on
// at the end of the series rather than having been a step (the late slope against the whole
// series', the share of the growth made in its second half) and of how far it stands above
// the readings' scatter.
//
// It is a leaf: standard library only, importing nothing of memdoctor's, so that the
// diagnosis (github.com/memdoctor/memdoctor/diagnose/rule) and the test helper
// (github.com/memdoctor/memdoctor/leaktest) can both import it without either importing the
// other. What a growth needs to be called a leak (the thresholds, and the verdict drawn from
// these measures) is each caller's own.
//
// A series is a slice of Points in order of position. A position is an integer: nanoseconds
// for readings in time (the diagnosis), calls of the tested function for a test's rounds
// (leaktest). Slopes are per unit of position, where unit positions make one: time.Second
// for readings in nanoseconds (slopes per second), 1 for calls (slopes per call). Positions
// are integers so that the thirds and the middle of a series are cut exactly where the
// diagnosis has always cut them.
package trend

import (
	"math"
	"slices"
)

// Point is one reading of a series: At is its position (nanoseconds, or calls), V its value.
type Point struct {
	At int64
	V  float64
}

// MaxPoints bounds the trend test's O(n²) work: longer series are reduced to this many bucket
// medians first (Reduce).
const MaxPoints = 240

// Fit is a robust estimate of how a series moves along its positions.
type Fit struct {
	N           int
	Slope       float64 // Theil-Sen: the median of the pairwise slopes, per unit
	Intercept   float64 // value at the first point's position on the fitted line
	Z           float64 // Mann-Kendall's normalised S statistic
	P           float64 // one-sided p-value for an upward trend
	Tau         float64 // Kendall's tau: S over the number of pairs, -1 (always falling) to 1 (always rising)
	First, Last float64 // the fitted line's values at the first and last points
	Span        int64   // from the first point's position to the last's
}

// Increasing reports an upward trend significant at level alpha.
func (f Fit) Increasing(alpha float64) bool { return f.N >= 6 && f.Slope > 0 && f.P < alpha }

// Units is the distance d between two positions in units (unit positions make one), computed
// as time.Duration.Seconds computes seconds from nanoseconds.
func Units(d, unit int64) float64 {
	return float64(d/unit) + float64(d%unit)/float64(unit)
}

// Of fits a series with Theil-Sen and tests it with Mann-Kendall; a series longer than
// MaxPoints is reduced first. Slopes are per unit.
func Of(pts []Point, unit int64) Fit {
	pts = Reduce(pts, MaxPoints)
	n := len(pts)
	tr := Fit{N: n, P: 1}
	if n < 3 {
		return tr
	}
	t0 := pts[0].At
	x := make([]float64, n)
	for i, p := range pts {
		x[i] = Units(p.At-t0, unit)
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
	tr.Slope = Median(slopes)
	tr.Tau = s / float64(n*(n-1)/2)
	ints := make([]float64, n)
	for i, p := range pts {
		ints[i] = p.V - tr.Slope*x[i]
	}
	tr.Intercept = Median(ints)
	tr.First = tr.Intercept
	tr.Last = tr.Intercept + tr.Slope*x[n-1]
	tr.Span = pts[n-1].At - t0
	// Mann-Kendall, with the variance corrected for ties (truncated MiB values tie often).
	vs := Values(pts)
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

// Reduce returns at most max points: the median value of equal-width buckets of positions,
// placed at each bucket's median position.
func Reduce(pts []Point, max int) []Point {
	if len(pts) <= max {
		return pts
	}
	start := pts[0].At
	span := pts[len(pts)-1].At - start
	if span <= 0 {
		return pts[:max]
	}
	out := make([]Point, 0, max)
	var bucket []Point
	cur := 0
	for _, p := range pts {
		i := min(int(float64(p.At-start)/float64(span)*float64(max)), max-1)
		if i != cur && len(bucket) > 0 {
			out = append(out, Point{At: bucket[len(bucket)/2].At, V: Median(Values(bucket))})
			bucket = bucket[:0]
		}
		cur = i
		bucket = append(bucket, p)
	}
	return append(out, Point{At: bucket[len(bucket)/2].At, V: Median(Values(bucket))})
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

// Level is a sequential boundary's level over n readings: 0 (never) below minPoints readings,
// then levels in turn, the last from there on. A series judged again as each reading comes in
// is consistent at a look when its one-sided p-value is at most the level for its length;
// levels that fall with n hold the chance that a series with no trend ever crosses, however
// many looks (each caller states and checks its own rate).
func Level(levels []float64, minPoints, n int) float64 {
	i := n - minPoints
	if i < 0 || len(levels) == 0 {
		return 0
	}
	return levels[min(i, len(levels)-1)]
}
