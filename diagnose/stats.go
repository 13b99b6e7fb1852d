package diagnose

import (
	"math"
	"slices"

	"github.com/memdoctor/memdoctor/breakdown"
)

// percentile returns the p-th percentile (0..100) of vs by linear interpolation between
// closest ranks; 0 for no values.
func percentile(vs []float64, p float64) float64 {
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

// maxPoint returns the point with the largest value.
func maxPoint(pts []Point) (Point, bool) {
	if len(pts) == 0 {
		return Point{}, false
	}
	best := pts[0]
	for _, p := range pts[1:] {
		if p.V > best.V {
			best = p
		}
	}
	return best, true
}

func values(pts []Point) []float64 {
	vs := make([]float64, len(pts))
	for i, p := range pts {
		vs[i] = p.V
	}
	return vs
}

// pointsOf builds points from breakdowns with a value function over their index.
func pointsOf(bs []*breakdown.At, v func(i int) float64) []Point {
	pts := make([]Point, len(bs))
	for i, b := range bs {
		pts[i] = Point{b.Time, v(i)}
	}
	return pts
}
