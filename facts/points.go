package facts

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/leaktest/trend"
)

// startupGrace is how long after its start a process is left to settle: the binary pages in
// and the runtime initializes; growth then is start-up, not a trend.
const startupGrace = 2 * time.Second

// residentGrace is how long resident memory takes to settle after a start: the heap rises to
// its goal, free pages accumulate, the binary pages in.
const residentGrace = 30 * time.Second

// settled drops the readings taken while the process was starting (when its start is known),
// unless too few would be left.
func settled(ev *evidence.Evidence, pts []Point) []Point {
	return settledAfter(ev, pts, startupGrace)
}

// settledAfter drops the readings taken within grace of the process's start, or of its last
// restart in the window (the readings before it belong to a process that is gone), unless
// too few would be left.
func settledAfter(ev *evidence.Evidence, pts []Point, grace time.Duration) []Point {
	start := ev.Target.Started
	if n := len(ev.Restarts); n > 0 && ev.Restarts[n-1].After(start) {
		start = ev.Restarts[n-1]
	}
	if start.IsZero() {
		return pts
	}
	from := start.Add(grace)
	i := 0
	for i < len(pts) && pts[i].T.Before(from) {
		i++
	}
	if len(pts)-i < 3 {
		return pts
	}
	return pts[i:]
}

// settledSnaps drops the snapshots taken while the process was starting, as settled does
// for readings.
func settledSnaps(ev *evidence.Evidence, refs []Snapshot) []Snapshot {
	pts := make([]Point, len(refs))
	for i, r := range refs {
		pts[i] = Point{T: r.T}
	}
	return refs[len(refs)-len(settled(ev, pts)):]
}

// Observed keeps the first of each run of equal readings. The live heap is measured by a
// GC: a heap profile, or a gauge sampled between two cycles, repeats the last cycle's value,
// and the repeats are not new observations (they would also date the last one too late).
func Observed(pts []Point) []Point {
	if len(pts) < 2 {
		return pts
	}
	out := make([]Point, 0, len(pts))
	for i, p := range pts {
		if i == 0 || p.V != pts[i-1].V {
			out = append(out, p)
		}
	}
	return out
}

// floorSlices is about how many slices Floor cuts a window into.
const floorSlices = 10

// Floor returns the lows a swinging series returns to: the lowest reading of each of about
// ten equal time slices (each at least three readings wide), so that bursts of garbage or
// of in-flight requests between them do not count as growth. A series of fewer than 20
// readings is returned as it is: it is too sparse to tell its lows from its highs. A last
// slice shorter than half the others is left out (a burst in progress would read as a rise).
func Floor(pts []Point) []Point {
	n := len(pts)
	if n < 20 {
		return pts
	}
	span := pts[n-1].T.Sub(pts[0].T)
	width := max(span/floorSlices, 3*span/time.Duration(n-1))
	if width <= 0 {
		return pts
	}
	var out []Point
	start := pts[0].T
	for i := 0; i < n; {
		end := start.Add(width)
		lo := i
		j := i
		for ; j < n && pts[j].T.Before(end); j++ {
			if pts[j].V < pts[lo].V {
				lo = j
			}
		}
		if j == n && pts[n-1].T.Sub(start) < width/2 && len(out) > 0 {
			break
		}
		if j > i {
			out = append(out, pts[lo])
		}
		i, start = j, end
	}
	return out
}

// Rates turns a cumulative counter into its rate over about ten slices (each at least two
// readings wide), placed at each slice's end.
func Rates(pts []Point) []Point {
	n := len(pts)
	if n < 3 {
		return nil
	}
	span := pts[n-1].T.Sub(pts[0].T)
	width := max(span/floorSlices, 2*span/time.Duration(n-1))
	var out []Point
	prev := pts[0]
	for _, p := range pts[1:] {
		if dt := p.T.Sub(prev.T); dt >= width || p == pts[n-1] && dt >= width/2 {
			out = append(out, Point{T: p.T, V: math.Max(0, p.V-prev.V) / dt.Seconds(), Src: p.Src})
			prev = p
		}
	}
	return out
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
func Median(vs []float64) float64 { return trend.Median(vs) }

// Percentile returns the p-th percentile (0..100) of vs by linear interpolation between
// closest ranks; 0 for no values. The growth statistics' own (leaktest/trend), so that a
// median is the same number in every layer.
func Percentile(vs []float64, p float64) float64 { return trend.Percentile(vs, p) }

// MaxPoint returns the point with the largest value.
func MaxPoint(pts []Point) (Point, bool) {
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

// spread picks at most n snapshots evenly, always keeping the first and the last.
func spread(refs []Snapshot, n int) []Snapshot {
	if len(refs) <= n {
		return refs
	}
	out := make([]Snapshot, 0, n)
	for i := range n {
		out = append(out, refs[i*(len(refs)-1)/(n-1)])
	}
	return out
}
