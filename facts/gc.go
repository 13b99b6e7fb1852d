package facts

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// GC is the GC's cadence and cost as the pacer model reads them.
type GC struct {
	// CPUKnown is true when the GC's CPU time was measured over a span; Cores is its CPU use
	// in cores over the window, less the share the threads waited for a CPU.
	CPUKnown bool
	Cores    float64
	// MedianLive is the live heap's median (the heap in use's without live readings); gctrace
	// truncates to whole MiB, so a live heap under 1 MiB reads 0 there: it counts as half a
	// MiB.
	MedianLive float64
	// AllocRate is the allocation rate, bytes per second: measured, else estimated from
	// gctrace (what the heap grew between one cycle's end and the next one's start).
	AllocRate float64
	// Rates is the GC's cycles per second over about ten slices of the window.
	Rates []Point
	// Every is how long the target's own GC took per cycle over the window (forced cycles
	// left out): the cycles counted over the span they were counted in; with none counted,
	// that span (no cycle ran in it: the next one is at least that far). Each cycle is a
	// reading of the live heap: a verdict on the live heap waits on them. 0 when the cycles
	// were not counted.
	Every time.Duration
}

// Cadence reads the GC's cadence from the evidence and its summary.
func Cadence(ev *evidence.Evidence, sum Summary) GC {
	g := GC{CPUKnown: gcCPUKnown(ev), Cores: gcCores(ev), AllocRate: sum.AllocBytesPerSecond, Rates: Rates(ev.GCCycles.Points), Every: gcEvery(ev)}
	s := &ev.Live
	if s.Empty() {
		s = &ev.HeapInUse
	}
	g.MedianLive = Median(s.Values())
	if g.MedianLive == 0 && s.Src == evidence.SourceGCTrace && s.Len() > 0 {
		g.MedianLive = 512 << 10
	}
	if g.AllocRate <= 0 {
		g.AllocRate = gctraceAllocRate(ev)
	}
	return g
}

// gcEvery is how long the target's own GC took per cycle over the window (GC.Every).
func gcEvery(ev *evidence.Evidence) time.Duration {
	span := ev.GCCycles.Span()
	if ev.GCCycles.Len() < 2 || span <= 0 {
		return 0
	}
	own := ev.GCCycles.Increase() - ev.GCForced.Increase()
	if own < 1 {
		return span
	}
	return time.Duration(float64(span) / own)
}

// gctraceAllocRate estimates the allocation rate from gctrace: what the heap grew by between
// one cycle's end (its live heap) and the next cycle's start.
func gctraceAllocRate(ev *evidence.Evidence) float64 {
	live, atGC := ev.Live.Points, ev.HeapAtGC.Points
	if len(live) < 3 || len(live) != len(atGC) || ev.Live.Src != evidence.SourceGCTrace {
		return 0
	}
	var total float64
	for i := 1; i < len(live); i++ {
		total += math.Max(0, atGC[i].V-live[i-1].V)
	}
	if span := live[len(live)-1].T.Sub(live[0].T).Seconds(); span > 0 {
		return total / span
	}
	return 0
}
