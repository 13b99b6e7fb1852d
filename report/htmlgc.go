package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// maxGCMarks bounds the GC cycles drawn one by one; past it, one mark per time slice that had
// a cycle.
const maxGCMarks = 4000

// heapChart is the live heap against the GC's heap goal, with the heap in use (live plus
// garbage) between them and each GC cycle marked.
func heapChart(ev *evidence.Evidence, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "heap", Title: "Heap: live against the GC goal", Unit: "bytes", MarksLabel: "GC cycle"}
	c.Points = ev.Live.Len() + ev.HeapGoal.Len() + ev.HeapInUse.Len()
	if c.Points == 0 {
		c.Empty = "No heap figures in this session (no gctrace, pprof endpoint or agent)."
		return c
	}
	type line struct {
		name  string
		s     *evidence.Series
		color int
		dash  []int
	}
	var lines []line
	var series [][]evidence.Point
	for _, l := range []line{
		{"heap in use (live + garbage)", &ev.HeapInUse, 1, []int{2, 3}},
		{"live heap", &ev.Live, 0, nil},
		{"heap goal", &ev.HeapGoal, 10, []int{8, 4}},
	} {
		if !l.s.Empty() {
			lines = append(lines, l)
			series = append(series, downsamplePoints(l.s.Points, ev.Start, ev.End, buckets))
		}
	}
	xs, vals := join(series...)
	c.X = nums{secondsSince(t0, xs), 3}
	for i, l := range lines {
		c.Series = append(c.Series, Series{Name: l.name, Unit: "bytes", Color: l.color, Dash: l.dash, Values: nums{vals[i], 0}})
	}
	c.Caption = "The live heap is what the last GC found reachable"
	if !ev.Live.Empty() {
		c.Caption += " (from " + ev.Live.Src.String() + ")"
	}
	c.Caption += "; the goal is the heap size at which the next GC starts (GOGC, GOMEMLIMIT); ticks along the bottom mark GC cycles."
	if ev.GCCycles.Src == evidence.SourceGCTrace {
		m := gcMarks(ev, t0, buckets)
		c.Marks = &m
	}
	return c
}

// gcMarks returns the GC cycles' times (gctrace: one point per cycle, or per time slice when
// there were too many), or when there are too many to draw, the start of each time slice that
// had at least one.
func gcMarks(ev *evidence.Evidence, t0 time.Time, buckets int) nums {
	pts := ev.GCCycles.Points
	var out []float64
	if len(pts) <= maxGCMarks {
		for _, p := range pts {
			out = append(out, p.T.Sub(t0).Seconds())
		}
		return nums{out, 3}
	}
	span := ev.End.Sub(ev.Start)
	last := -1
	for _, p := range pts {
		b := int(float64(p.T.Sub(ev.Start)) / float64(span) * float64(buckets))
		if b != last {
			out = append(out, p.T.Sub(t0).Seconds())
			last = b
		}
	}
	return nums{out, 3}
}

// bins are equal slices of the window for rates: GC cycles/s and GC CPU.
type bins struct {
	start time.Time
	width time.Duration
	n     int
}

// newBins cuts the window into at most maxN slices of at least minWidth.
func newBins(start, end time.Time, maxN int, minWidth time.Duration) bins {
	span := end.Sub(start)
	w := max(span/time.Duration(maxN), minWidth)
	n := int(span / w)
	if span-time.Duration(n)*w >= w/2 {
		n++ // a last slice of at least half a width stands alone; a shorter one joins the one before
	}
	return bins{start: start, width: w, n: max(n, 1)}
}

// of returns the slice that holds t (the last one runs to the window's end), or -1 before the
// window.
func (b bins) of(t time.Time) int {
	if t.Before(b.start) {
		return -1
	}
	return min(int(t.Sub(b.start)/b.width), b.n-1)
}

func (b bins) centers(t0, end time.Time) []float64 {
	out := make([]float64, b.n)
	for i := range out {
		out[i] = b.start.Add(time.Duration(i) * b.width).Add(b.widthOf(i, end) / 2).Sub(t0).Seconds()
	}
	return out
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// gcChart is the GC rate (cycles per second) and the share of CPU the GC takes, with the
// share spent in mark assists apart, averaged over equal slices of the window.
func gcChart(ev *evidence.Evidence, t0 time.Time, maxBins int) Chart {
	c := Chart{ID: "gc", Title: "GC cycles per second and GC CPU", Unit: "per_second", Unit2: "fraction"}
	if ev.GCCycles.Len() < 2 {
		c.Empty = "No GC figures in this session (no gctrace and fewer than two readings of the Go runtime)."
		return c
	}
	b := newBins(ev.Start, ev.End, maxBins, rateWidth(ev))
	c.Points = ev.GCCycles.Len()
	rate := binRate(&ev.GCCycles, b, ev.End, nil)
	c.X = nums{b.centers(t0, ev.End), 3}
	c.Series = append(c.Series, Series{Name: "GC cycles/s", Unit: "per_second", Color: 2, Values: nums{rate, 4}})
	base, of := &ev.AvailableCPU, "all CPU time (GOMAXPROCS × wall time)"
	if base.Len() < 2 {
		base, of = &ev.ProcessCPU, "the process's CPU time"
	}
	if ev.GCCPU.Len() >= 2 && base.Len() >= 2 {
		c.Series = append(c.Series, Series{Name: "GC CPU", Unit: "fraction", Axis: 1, Color: 3, Dash: []int{8, 4}, Values: nums{binRate(&ev.GCCPU, b, ev.End, base), 5}})
		if ev.GCAssist.Len() >= 2 {
			c.Series = append(c.Series, Series{Name: "GC CPU in mark assists", Unit: "fraction", Axis: 1, Color: 4, Dash: []int{2, 3}, Values: nums{binRate(&ev.GCAssist, b, ev.End, base), 5}})
		}
	}
	c.Caption = fmt.Sprintf("Averaged over %s slices, from %s. GC CPU is the share of %s "+
		"the collector took; mark assists are the part that request goroutines paid for.", Duration(b.width), ev.GCCycles.Src, of)
	if len(c.Series) == 1 {
		c.Caption = fmt.Sprintf("Averaged over %s slices, from %s. The GC's CPU time is unknown: %s.", Duration(b.width), ev.GCCycles.Src, ev.Gaps[evidence.GapGCCPU])
	}
	return c
}

// rateWidth is the shortest slice that averages GC rates without aliasing: ten times the
// median time between readings of the cycle counter, within [2 s, a thirtieth of the window].
func rateWidth(ev *evidence.Evidence) time.Duration {
	const floor = 2 * time.Second
	pts := ev.GCCycles.Points
	var gaps []time.Duration
	for i := 1; i < len(pts); i++ {
		gaps = append(gaps, pts[i].T.Sub(pts[i-1].T))
	}
	if len(gaps) == 0 {
		return floor
	}
	slices.Sort(gaps)
	w := min(10*gaps[len(gaps)/2], ev.End.Sub(ev.Start)/30)
	return max(w, floor)
}

// binRate is a counter's increase per second in each slice (each interval between two of its
// readings counts in the slice where it ends), or, with per, its increase over per's in the
// same slices (a share of CPU time).
func binRate(c *evidence.Series, b bins, end time.Time, per *evidence.Series) []float64 {
	inc := make([]float64, b.n)
	acc := func(s *evidence.Series, into []float64) {
		for k := 1; k < s.Len(); k++ {
			prev, cur := s.Points[k-1], s.Points[k]
			if i := b.of(cur.T); i >= 0 && cur.V >= prev.V {
				into[i] += cur.V - prev.V
			}
		}
	}
	acc(c, inc)
	out := nanSlice(b.n)
	if per != nil {
		den := make([]float64, b.n)
		acc(per, den)
		for i := range out {
			if den[i] > 0 {
				out[i] = math.Min(inc[i]/den[i], 1)
			}
		}
		return out
	}
	for i := range out {
		if w := b.widthOf(i, end).Seconds(); w > 0 {
			out[i] = inc[i] / w
		}
	}
	return out
}

// widthOf is the length of slice i; the last one ends at the window's end.
func (b bins) widthOf(i int, end time.Time) time.Duration {
	from := b.start.Add(time.Duration(i) * b.width)
	if i == b.n-1 {
		return end.Sub(from)
	}
	return b.width
}

// goroutinesChart is the number of goroutines over time, with those the runtime proved
// leaked when it did.
func goroutinesChart(ev *evidence.Evidence, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "goroutines", Title: "Goroutines", Unit: "count"}
	c.Points = ev.Goroutines.Len()
	if c.Points == 0 {
		c.Empty = "No goroutine counts in this session."
		return c
	}
	series := [][]evidence.Point{downsamplePoints(ev.Goroutines.Points, ev.Start, ev.End, buckets)}
	if !ev.Leaked.Empty() {
		series = append(series, downsamplePoints(ev.Leaked.Points, ev.Start, ev.End, buckets))
	}
	xs, vals := join(series...)
	c.X = nums{secondsSince(t0, xs), 3}
	c.Series = []Series{{Name: "goroutines", Unit: "count", Color: 5, Values: nums{vals[0], 0}}}
	if len(vals) > 1 {
		c.Series = append(c.Series, Series{Name: "leaked (proved by the runtime)", Unit: "count", Color: 6, Dash: []int{4, 3}, Values: nums{vals[1], 0}})
	}
	c.Caption = fmt.Sprintf("From %s. A count that only climbs, and does not come back down when the load does, is a goroutine leak.", ev.Goroutines.Src)
	return c
}
