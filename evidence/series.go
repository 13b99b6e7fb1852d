package evidence

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Point is one reading of a quantity: when, how much, and what measured it.
type Point struct {
	T   time.Time
	V   float64
	Src Source
}

// Resolution is how fine a series' readings are: how far apart in time (Step, the median
// gap between readings, or the width of the time slices a long series was reduced to) and
// the smallest change its values can show (Quantum: gctrace prints whole MiB).
type Resolution struct {
	Step    time.Duration
	Quantum float64
}

// Series is one canonical quantity over time, its points in time order, all from one source
// (Src). A series longer than maxBuckets time slices keeps, for each slice, its lowest and
// highest reading: floors, peaks and the ends of cumulative counters survive, whatever the
// session's length.
type Series struct {
	Points []Point
	Src    Source
	Res    Resolution
}

// Len is the number of points.
func (s *Series) Len() int { return len(s.Points) }

// Empty reports a series without points.
func (s *Series) Empty() bool { return len(s.Points) == 0 }

// First and Last return the first and last points (zero Point when empty).
func (s *Series) First() Point {
	if len(s.Points) == 0 {
		return Point{}
	}
	return s.Points[0]
}

// Last returns the last point (zero Point when empty).
func (s *Series) Last() Point {
	if len(s.Points) == 0 {
		return Point{}
	}
	return s.Points[len(s.Points)-1]
}

// Max returns the highest point (false when empty).
func (s *Series) Max() (Point, bool) {
	if len(s.Points) == 0 {
		return Point{}, false
	}
	best := s.Points[0]
	for _, p := range s.Points[1:] {
		if p.V > best.V {
			best = p
		}
	}
	return best, true
}

// Min returns the lowest point (false when empty).
func (s *Series) Min() (Point, bool) {
	if len(s.Points) == 0 {
		return Point{}, false
	}
	best := s.Points[0]
	for _, p := range s.Points[1:] {
		if p.V < best.V {
			best = p
		}
	}
	return best, true
}

// Span is the time from the first to the last point.
func (s *Series) Span() time.Duration {
	if len(s.Points) < 2 {
		return 0
	}
	return s.Points[len(s.Points)-1].T.Sub(s.Points[0].T)
}

// Values returns the values, in time order.
func (s *Series) Values() []float64 {
	vs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		vs[i] = p.V
	}
	return vs
}

// At returns the last point at or before t, else the first point after it (false when empty).
func (s *Series) At(t time.Time) (Point, bool) {
	if len(s.Points) == 0 {
		return Point{}, false
	}
	i := sort.Search(len(s.Points), func(i int) bool { return s.Points[i].T.After(t) })
	if i == 0 {
		return s.Points[0], true
	}
	return s.Points[i-1], true
}

// Nearest returns the point closest in time to t (false when empty).
func (s *Series) Nearest(t time.Time) (Point, bool) {
	if len(s.Points) == 0 {
		return Point{}, false
	}
	i := sort.Search(len(s.Points), func(i int) bool { return !s.Points[i].T.Before(t) })
	switch {
	case i == 0:
		return s.Points[0], true
	case i == len(s.Points):
		return s.Points[i-1], true
	case t.Sub(s.Points[i-1].T) <= s.Points[i].T.Sub(t):
		return s.Points[i-1], true
	}
	return s.Points[i], true
}

// Between returns the points within [from, to] (sharing the series' storage).
func (s *Series) Between(from, to time.Time) []Point {
	lo := sort.Search(len(s.Points), func(i int) bool { return !s.Points[i].T.Before(from) })
	hi := sort.Search(len(s.Points), func(i int) bool { return s.Points[i].T.After(to) })
	if lo >= hi {
		return nil
	}
	return s.Points[lo:hi:hi]
}

// Increase is how much a cumulative counter rose between its first and last points (0 when
// it has fewer than two). Counters are made monotonic when they are built (a restarted
// process starts again from zero), so the difference is the total over the span.
func (s *Series) Increase() float64 {
	if len(s.Points) < 2 {
		return 0
	}
	return math.Max(0, s.Points[len(s.Points)-1].V-s.Points[0].V)
}

// Rate is a counter's average increase per second over its span (0 when unknown).
func (s *Series) Rate() float64 {
	if d := s.Span().Seconds(); d > 0 {
		return s.Increase() / d
	}
	return 0
}

// maxBuckets bounds the time slices of a series: beyond it, slices double in width (to half
// as many) and each keeps its lowest and highest reading, so a series holds at most
// 2 x maxBuckets points (about 330 KB).
const maxBuckets = 4096

// bucket is one time slice of a series being built: the lowest and highest readings in it.
type bucket struct {
	idx        int64 // slice index: (t - origin) / width, or t in nanoseconds while exact
	n          int32
	minT, maxT int64
	minV, maxV float64
}

// builder accumulates readings of one quantity from one source into a bounded series. Points
// may arrive slightly out of time order (an agent's history is copied after the readings
// taken meanwhile): each lands in its own time slice.
type builder struct {
	src     Source
	quantum float64
	width   int64 // nanoseconds per slice; 0 = exact (one slice per distinct time)
	origin  int64
	buckets []bucket
	spare   []bucket // coarsen's other buffer: the two are swapped, never reallocated
	raw     int      // readings added
	// Counters are made monotonic: a reading below the previous one (a restart from zero)
	// adds the previous reading to an offset.
	counter     bool
	offset, obs float64 // offset added; the last observed raw value
	lastRawT    int64
	// The earliest and latest readings, kept exactly: a reduced series still starts and ends
	// where its readings did.
	firstT, lastT int64
	firstV, lastV float64
}

func newBuilder(src Source, quantum float64) *builder {
	return &builder{src: src, quantum: quantum}
}

func newCounter(src Source) *builder {
	return &builder{src: src, counter: true}
}

// add records v at t.
func (b *builder) add(t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || t.IsZero() {
		return
	}
	ns := t.UnixNano()
	if b.counter {
		if b.raw > 0 && ns >= b.lastRawT && v < b.obs {
			b.offset += b.obs // a reset: the counter started again from zero
		}
		if ns >= b.lastRawT {
			b.obs, b.lastRawT = v, ns
		}
		v += b.offset
	}
	b.raw++
	if b.raw == 1 {
		b.origin = ns
		b.firstT, b.firstV, b.lastT, b.lastV = ns, v, ns, v
	}
	if ns < b.firstT {
		b.firstT, b.firstV = ns, v
	}
	if ns >= b.lastT {
		b.lastT, b.lastV = ns, v
	}
	idx := ns
	if b.width > 0 {
		idx = floorDiv(ns-b.origin, b.width)
	}
	b.put(bucket{idx: idx, n: 1, minT: ns, maxT: ns, minV: v, maxV: v})
	if len(b.buckets) > maxBuckets {
		b.coarsen()
	}
}

// put merges a one-reading bucket into the slice it belongs to.
func (b *builder) put(nb bucket) {
	n := len(b.buckets)
	if n > 0 && b.buckets[n-1].idx == nb.idx { // the common case: in order, same slice
		b.buckets[n-1].merge(nb)
		return
	}
	i := n
	if n > 0 && b.buckets[n-1].idx > nb.idx {
		i = sort.Search(n, func(i int) bool { return b.buckets[i].idx >= nb.idx })
	}
	if i < n && b.buckets[i].idx == nb.idx {
		b.buckets[i].merge(nb)
		return
	}
	if i == n {
		if n == cap(b.buckets) && n < maxBuckets+1 {
			// Grow straight to the bound once a series is long enough to need it.
			grown := make([]bucket, n, min(max(2*n, 64), maxBuckets+1))
			copy(grown, b.buckets)
			b.buckets = grown
		}
		b.buckets = append(b.buckets, nb)
		return
	}
	b.buckets = slices.Insert(b.buckets, i, nb)
}

func (a *bucket) merge(o bucket) {
	a.n += o.n
	if o.minV < a.minV || o.minV == a.minV && o.minT < a.minT {
		a.minV, a.minT = o.minV, o.minT
	}
	if o.maxV > a.maxV || o.maxV == a.maxV && o.maxT > a.maxT {
		a.maxV, a.maxT = o.maxV, o.maxT
	}
}

// coarsen widens the slices so that the series spans about maxBuckets/2 of them.
func (b *builder) coarsen() {
	first, last := b.buckets[0].minT, b.buckets[0].maxT
	for _, k := range b.buckets {
		first, last = min(first, k.minT, k.maxT), max(last, k.minT, k.maxT)
	}
	w := max(2*b.width, (last-first)/(maxBuckets/2)+1)
	old := b.buckets
	if cap(b.spare) < maxBuckets+1 {
		b.spare = make([]bucket, 0, maxBuckets+1)
	}
	b.buckets, b.spare = b.spare[:0], old
	b.width = w
	for _, k := range old {
		// Each extreme goes to its own slice: the two readings of an old slice may straddle
		// a boundary of the new grid.
		lo, hi := k, k
		lo.n, lo.maxT, lo.maxV = 1, k.minT, k.minV
		hi.n, hi.minT, hi.minV = k.n-1, k.maxT, k.maxV
		for _, part := range []bucket{lo, hi} {
			if part.n == 0 {
				continue
			}
			part.idx = floorDiv(part.minT-b.origin, w)
			b.put(part)
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// series returns the points built so far, in time order.
func (b *builder) series() Series {
	if b == nil || len(b.buckets) == 0 {
		return Series{}
	}
	s := Series{Src: b.src, Res: Resolution{Quantum: b.quantum}}
	s.Points = make([]Point, 0, 2*len(b.buckets)+2)
	if b.width > 0 { // reduced: the exact ends, besides each slice's extremes
		s.Points = append(s.Points, Point{time.Unix(0, b.firstT).UTC(), b.firstV, b.src}, Point{time.Unix(0, b.lastT).UTC(), b.lastV, b.src})
	}
	for _, k := range b.buckets {
		lo := Point{time.Unix(0, k.minT).UTC(), k.minV, b.src}
		hi := Point{time.Unix(0, k.maxT).UTC(), k.maxV, b.src}
		switch {
		case k.n == 1 || k.minT == k.maxT && k.minV == k.maxV:
			s.Points = append(s.Points, lo)
		case k.minT <= k.maxT:
			s.Points = append(s.Points, lo, hi)
		default:
			s.Points = append(s.Points, hi, lo)
		}
	}
	// Slices are in order; within the slice pairs above too; neighbours' extremes never
	// cross, but equal times from coarsening can: a stable sort keeps it exact.
	slices.SortStableFunc(s.Points, func(a, b Point) int { return a.T.Compare(b.T) })
	s.Points = slices.CompactFunc(s.Points, func(a, b Point) bool { return a.T.Equal(b.T) && a.V == b.V })
	if n := len(s.Points); n >= 2 {
		step := s.Points[n-1].T.Sub(s.Points[0].T) / time.Duration(max(b.raw-1, 1))
		s.Res.Step = max(step, time.Duration(b.width))
	}
	return s
}

// count is the readings added.
func (b *builder) count() int {
	if b == nil {
		return 0
	}
	return b.raw
}
