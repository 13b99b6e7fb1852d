package evidence

import (
	"slices"
	"time"
)

// A service watched through its embedded agent can starve the agent of CPU (its own
// goroutines spinning): the agent's runtime/metrics readings stop, or come with holes, and
// memdoctor reads the same runtime's figures from the process's memory instead (the
// recorder's agent fallback). The two sources read the very same runtime records for most
// quantities, checked against the Go 1.26 runtime (runtime/metrics.go's compute functions;
// collect/memread's Stats reads the records they read):
//
//   - heap objects, allocations (bytes and objects, cumulative since the start in both:
//     gcController.totalAlloc and the consistent heap statistics' per-class counts), the live
//     heap (gcController.heapMarked), the goal (the pacer's heapGoal), free heap, stacks,
//     the runtime's total: the same records or their sums;
//   - GC cycles and forced cycles (memstats.numgc and numforcedgc, cumulative in both), the
//     GC's and the process's CPU seconds (work.cpuStats, which runtime/metrics copies):
//     the same counters.
//
// Those quantities list process-memory in follow: a runtime/metrics series goes on with the
// process-memory readings where it has none (after its last reading, and in its holes), one
// series of one figure, each point keeping its source.
//
// The goroutine count is not the same figure: since Go 1.26 /sched/goroutines counts the
// runtime's system goroutines (gcount(true)), which runtime.NumGoroutine and memory's count
// leave out. Its series is not joined across the two; when the agent's readings end early
// and memory's read on past them, memory's series is taken instead (outlast), led by the
// goroutine profiles' totals from before it (lead: the same figure as memory's).

// joinGap is how far, in the followed series' median steps between readings, a reading of a
// source that follows must be from every reading of the series to fill a hole in it.
const joinGap = 2

// pick is the series of the quantity d describes: its best source's, led (bestLed), or, when
// that is runtime/metrics and another source reads on where it stopped, continued by that
// source (follow) or given up for it (outlast).
func (m multi) pick(d *desc) Series {
	sources := d.sources
	if m.outlasted(d) {
		sources = slices.DeleteFunc(slices.Clone(sources), func(s Source) bool { return s == SourceRuntimeMetrics })
	}
	s := m.bestLed(sources, d.lead)
	if s.Src != SourceRuntimeMetrics || len(d.follow) == 0 {
		return s
	}
	return m.continued(s, d)
}

// outlasted reports whether the runtime/metrics readings of d's quantity end early and a
// source of outlast, with a series of its own, reads on after them.
func (m multi) outlasted(d *desc) bool {
	rm := m.get(SourceRuntimeMetrics)
	if len(d.outlast) == 0 || rm.count() == 0 {
		return false
	}
	s := rm.series()
	end := s.Last().T.Add(joinGap * medianStep(s.Points))
	for _, src := range d.outlast {
		if b := m.get(src); b.count() >= minBest {
			if o := b.series(); o.Last().T.After(end) {
				return true
			}
		}
	}
	return false
}

// continued is s (runtime/metrics) with the readings of d's follow sources that lie where s
// has none: farther than joinGap median steps from each of its readings. A counter whose
// joined readings would go down (the series continued across a restart of the process, which
// shifts its level) is left as it was.
func (m multi) continued(s Series, d *desc) Series {
	step := joinGap * medianStep(s.Points)
	var extra []Point
	for _, src := range d.follow {
		for _, p := range m.get(src).series().Points {
			if !near(s.Points, p.T, step) {
				extra = append(extra, p)
			}
		}
	}
	if len(extra) == 0 {
		return s
	}
	pts := append(slices.Clone(s.Points), extra...)
	slices.SortStableFunc(pts, func(a, b Point) int { return a.T.Compare(b.T) })
	if d.counter {
		for i := 1; i < len(pts); i++ {
			if pts[i].V < pts[i-1].V {
				return s
			}
		}
	}
	s.Points = pts
	return s
}

// near reports whether a point of pts (in time order) lies within d of t.
func near(pts []Point, t time.Time, d time.Duration) bool {
	i, _ := slices.BinarySearchFunc(pts, t, func(p Point, t time.Time) int { return p.T.Compare(t) })
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(pts) {
			if gap := pts[j].T.Sub(t); gap <= d && gap >= -d {
				return true
			}
		}
	}
	return false
}

// medianStep is the median time between consecutive points; a second when there are fewer
// than two.
func medianStep(pts []Point) time.Duration {
	if len(pts) < 2 {
		return time.Second
	}
	steps := make([]time.Duration, 0, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		steps = append(steps, pts[i].T.Sub(pts[i-1].T))
	}
	slices.Sort(steps)
	return max(steps[len(steps)/2], time.Millisecond)
}
