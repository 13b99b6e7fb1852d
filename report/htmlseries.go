package report

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// nums is a series of numbers as the page's JSON carries them: NaN (no value at that time)
// becomes null, and every value is rounded to prec decimals, which keeps a 24-hour page small.
type nums struct {
	v    []float64
	prec int
}

func (n nums) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(n.v)*8)
	b = append(b, '[')
	for i, v := range n.v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, roundTo(v, n.prec), 'f', -1, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what MarshalJSON writes (null is NaN); the precision is not kept.
func (n *nums) UnmarshalJSON(b []byte) error {
	var vs []*float64
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	n.v = make([]float64, len(vs))
	for i, v := range vs {
		n.v[i] = math.NaN()
		if v != nil {
			n.v[i] = *v
		}
	}
	return nil
}

func roundTo(v float64, prec int) float64 {
	p := math.Pow10(prec)
	r := math.Round(v*p) / p
	if r == 0 {
		return 0 // no "-0"
	}
	return r
}

// pickExtremes chooses which of n time-ordered points to draw so that the picture keeps its
// peaks and troughs: all of them when n <= 2*buckets, else, for each of buckets equal slices
// of [start, end], the indices of the smallest and the largest value(v) in it, in time order.
// It returns indices into the original points, ascending.
func pickExtremes(n int, t func(int) time.Time, v func(int) float64, start, end time.Time, buckets int) []int {
	if n <= 2*buckets || buckets <= 0 {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	span := end.Sub(start)
	if span <= 0 {
		span = t(n - 1).Sub(t(0))
		start = t(0)
	}
	bucketOf := func(i int) int {
		if span <= 0 {
			return 0
		}
		b := int(float64(t(i).Sub(start)) / float64(span) * float64(buckets))
		return min(max(b, 0), buckets-1)
	}
	out := make([]int, 0, 2*buckets)
	lo, hi, cur := -1, -1, -1
	flush := func() {
		switch {
		case lo < 0:
		case lo == hi:
			out = append(out, lo)
		case lo < hi:
			out = append(out, lo, hi)
		default:
			out = append(out, hi, lo)
		}
	}
	for i := range n {
		b := bucketOf(i)
		if b != cur {
			flush()
			lo, hi, cur = i, i, b
			continue
		}
		if v(i) < v(lo) {
			lo = i
		}
		if v(i) > v(hi) {
			hi = i
		}
	}
	flush()
	return out
}

// downsamplePoints keeps the extremes of pts (see pickExtremes).
func downsamplePoints(pts []evidence.Point, start, end time.Time, buckets int) []evidence.Point {
	idx := pickExtremes(len(pts), func(i int) time.Time { return pts[i].T }, func(i int) float64 { return pts[i].V }, start, end, buckets)
	if len(idx) == len(pts) {
		return pts
	}
	out := make([]evidence.Point, len(idx))
	for i, j := range idx {
		out[i] = pts[j]
	}
	return out
}

// join puts several series, each with its own times, on one time axis: the union of their
// times, each series NaN where it has no point. uPlot needs one x array per chart.
func join(series ...[]evidence.Point) (xs []time.Time, vals [][]float64) {
	for _, s := range series {
		for _, p := range s {
			xs = append(xs, p.T)
		}
	}
	slices.SortFunc(xs, func(a, b time.Time) int { return a.Compare(b) })
	xs = slices.CompactFunc(xs, func(a, b time.Time) bool { return a.Equal(b) })
	vals = make([][]float64, len(series))
	for k, s := range series {
		col := make([]float64, len(xs))
		for i := range col {
			col[i] = math.NaN()
		}
		j := 0
		for _, p := range s {
			for j < len(xs) && xs[j].Before(p.T) {
				j++
			}
			if j < len(xs) {
				col[j] = p.V
			}
		}
		vals[k] = col
	}
	return xs, vals
}

// secondsSince returns each time as seconds since t0.
func secondsSince(t0 time.Time, ts []time.Time) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(t0).Seconds()
	}
	return out
}
