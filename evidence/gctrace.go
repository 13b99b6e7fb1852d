package evidence

import (
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

// gcSums are the running sums of the gctrace cycles mapped so far.
type gcSums struct {
	n, forced   int
	cpu, assist float64
	prev        time.Time
	avail       float64 // GOMAXPROCS x wall time since the first cycle, CPU seconds
}

// gcCycle maps one gctrace cycle, written at t: the live heap, the heap at the cycle's start,
// the goal, and the counters of cycles, forced cycles, GC CPU, mark assists and available
// CPU. A session's gctrace.log and a gctrace log given to analyze both come through here.
func (b *sessionBuild) gcCycle(t time.Time, e gctrace.Cycle) {
	b.saw(t)
	g := &b.gc
	if g.n == 0 {
		// Counting starts from zero before the first cycle (at the session's start when it
		// is earlier): the first cycle counts.
		zero := t.Add(-time.Nanosecond)
		if !b.sessionStart.IsZero() && b.sessionStart.Before(zero) {
			zero = b.sessionStart
		}
		for _, q := range []quantity{qGCCycles, qGCForced, qGCCPU, qGCAssist, qAvailableCPU} {
			b.add(q, SourceGCTrace, zero, 0)
		}
		g.prev = zero
	}
	g.n++
	if e.Forced || e.LeakCheck {
		g.forced++
	}
	g.cpu += e.GCCPU().Seconds()
	g.assist += e.CPUAssist.Seconds()
	b.add(qLive, SourceGCTrace, t, float64(e.HeapLive))
	b.add(qHeapAtGC, SourceGCTrace, t, float64(max(e.HeapStart, e.HeapEnd)))
	b.add(qHeapGoal, SourceGCTrace, t, float64(e.Goal))
	b.add(qGCCycles, SourceGCTrace, t, float64(g.n))
	b.add(qGCForced, SourceGCTrace, t, float64(g.forced))
	b.add(qGCCPU, SourceGCTrace, t, g.cpu)
	b.add(qGCAssist, SourceGCTrace, t, g.assist)
	if e.Procs > 0 {
		if !g.prev.IsZero() && t.After(g.prev) {
			g.avail += t.Sub(g.prev).Seconds() * float64(e.Procs)
		}
		b.add(qAvailableCPU, SourceGCTrace, t, g.avail)
		b.gcProcs = e.Procs
	}
	g.prev = t
	if e.HasStacksGlobals {
		b.scans = append(b.scans, float64(e.Stacks+e.Globals))
	}
}
