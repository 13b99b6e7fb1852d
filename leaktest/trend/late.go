package trend

import (
	"math"
	"slices"
	"sort"
)

// LateShare is the share of the observed growth (first to last) made after the series'
// middle position, from the reading nearest the middle: a steady growth makes half of itself
// in the second half, a step made early none.
func LateShare(pts []Point, first, last float64) float64 {
	if last <= first {
		return 0
	}
	mid := pts[0].At + (pts[len(pts)-1].At-pts[0].At)/2
	i := sort.Search(len(pts), func(i int) bool { return pts[i].At >= mid })
	if i == len(pts) || i > 0 && mid-pts[i-1].At < pts[i].At-mid {
		i-- // the nearest reading: one a few milliseconds before the middle is the middle one
	}
	k := min(max(len(pts)/6, 1), 3)
	lo, hi := max(i-k/2, 0), min(i-k/2+k, len(pts))
	m := Median(Values(pts[lo:hi]))
	return (last - m) / (last - first)
}

// LateRatio is the slope of the series' last third over the whole series' (slope, per unit):
// the slope between the medians of the middle and the last thirds (by position), each placed
// at its median position, so that one outlier among the last readings (a burst live at a GC)
// cannot turn a rise into a fall. With no reading in one of the thirds, the Theil-Sen slope
// of the last three. Near 1, the growth goes on; near 0, it has levelled off.
func LateRatio(pts []Point, slope float64, unit int64) float64 {
	t0, span := pts[0].At, pts[len(pts)-1].At-pts[0].At
	mid, late := t0+span/3, t0+span*2/3
	var middle, last []Point
	for _, p := range pts {
		switch {
		case p.At >= late:
			last = append(last, p)
		case p.At >= mid:
			middle = append(middle, p)
		}
	}
	if len(middle) == 0 || len(last) == 0 {
		return Of(pts[max(len(pts)-3, 0):], unit).Slope / slope
	}
	at := func(g []Point) float64 { return Units(g[len(g)/2].At-t0, unit) }
	dt := at(last) - at(middle)
	if dt <= 0 {
		return Of(pts[max(len(pts)-3, 0):], unit).Slope / slope
	}
	return (Median(Values(last)) - Median(Values(middle))) / dt / slope
}

// Scatter is the spread of the readings around the fitted line f (1.4826 x the median
// absolute residual, which estimates a standard deviation), at least half the values'
// resolution (quantum).
func Scatter(pts []Point, f Fit, quantum float64, unit int64) float64 {
	res := make([]float64, len(pts))
	t0 := pts[0].At
	for i, p := range pts {
		res[i] = math.Abs(p.V - (f.Intercept + f.Slope*Units(p.At-t0, unit)))
	}
	s := 1.4826 * Median(res)
	return math.Max(s, math.Max(quantum/2, 1e-9*math.Abs(Median(Values(pts)))+1e-12))
}

// Values returns the values of points.
func Values(pts []Point) []float64 {
	vs := make([]float64, len(pts))
	for i, p := range pts {
		vs[i] = p.V
	}
	return vs
}

// Median is the 50th percentile of vs (0 for none).
func Median(vs []float64) float64 { return Percentile(vs, 50) }

// Percentile returns the p-th percentile (0..100) of vs by linear interpolation between
// closest ranks; 0 for no values.
func Percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s) == 1 {
		return s[0]
	}
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}
