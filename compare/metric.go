package compare

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
)

// measure measures a quantity of a session over [a, b], and says whether it could.
type measure func(ev *evidence.Evidence, a, b time.Time) (float64, bool)

// metric is one row of the comparison: how to measure it over a span of a session, and what
// the diagnosis's summary calls it over the whole window.
type metric struct {
	name  string // as the JSON names it
	unit  string // per_second, fraction, bytes, bytes_per_second, count
	label string // as the table names it
	// gc marks a quantity the runtime updates once per GC cycle (cycles, GC CPU, assists, the
	// live heap): its intervals must be long enough to hold several cycles.
	gc bool
	// summary is the whole-window figure as diagnose.Summary defines it, so that compare and
	// the report never disagree on a number; nil when the summary has no such figure.
	summary func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool)
	// over measures the quantity over [a, b].
	over measure
	// centre: the headline is the median of the intervals' values (a floor over the whole
	// window would be the start-up's).
	centre bool
	// series is what the metric is read from: an interval must hold several of its readings.
	series func(ev *evidence.Evidence) *evidence.Series
	// minAbs is the smallest absolute change that counts, in the metric's unit: below it, two
	// runs of one program differ this much by chance (a few goroutines come and go with
	// connections; gctrace rounds the heap to whole MiB).
	minAbs float64
	// partOf, for a share of a part of the process's CPU (assists' share of GC CPU), measures
	// that part's share of the CPU over [a, b]; a change of the share counts only when it moves
	// at least minOfCPU of the process's CPU: a 25-point swing in how a GC taking 1% of the CPU
	// splits is a quarter of a point of CPU, the noise of a handful of cycles.
	partOf   measure
	minOfCPU float64
	// observed marks a counter memdoctor's own requests move: serving a profile allocates in
	// the target (megabytes for a goroutine profile's text), once a round, so an interval's
	// rate depends on how many rounds it holds. Such a counter is measured between rounds
	// when both sessions can be (betweenRounds).
	observed bool
}

// metrics are the rows, in the table's order. For every one of them, lower is better.
var metrics = []metric{
	{
		name: "gc_per_second", unit: "per_second", label: "GC cycles/s", gc: true,
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return s.GCPerSecond, s.GCSource != "" && ev.GCCycles.Len() >= 2
		},
		over:   gcRate,
		series: func(ev *evidence.Evidence) *evidence.Series { return &ev.GCCycles },
		minAbs: 0.1,
	},
	{
		name: "gc_cpu_fraction", unit: "fraction", label: "GC CPU", gc: true,
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return s.GCCPUFraction, ev.GCCPU.Len() >= 2 && ev.GCCPU.Span() > 0
		},
		over:   gcCPU,
		series: func(ev *evidence.Evidence) *evidence.Series { return &ev.GCCPU },
		minAbs: 0.01,
	},
	{
		name: "gc_assist_fraction", unit: "fraction", label: "GC CPU in assists", gc: true,
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return s.GCAssistFraction, ev.GCAssist.Len() >= 2 && ev.GCCPU.Increase() > 0
		},
		over:     assistShare,
		series:   func(ev *evidence.Evidence) *evidence.Series { return &ev.GCAssist },
		minAbs:   0.05,
		partOf:   gcCPU,
		minOfCPU: 0.01, // GC CPU's own floor: the assists move at least what a change of GC CPU must
	},
	{
		name: "alloc_bytes_per_second", unit: "bytes_per_second", label: "allocation rate",
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return s.AllocBytesPerSecond, ev.AllocBytes.Len() >= 2 && ev.AllocBytes.Span() > 0
		},
		over:     func(ev *evidence.Evidence, a, b time.Time) (float64, bool) { return rate(ev, &ev.AllocBytes, a, b) },
		series:   func(ev *evidence.Evidence) *evidence.Series { return &ev.AllocBytes },
		minAbs:   64 << 10,
		observed: true,
	},
	{
		name: "live_heap_floor_bytes", unit: "bytes", label: "live heap floor", gc: true, centre: true,
		over:   func(ev *evidence.Evidence, a, b time.Time) (float64, bool) { return extreme(&ev.Live, a, b, true) },
		series: func(ev *evidence.Evidence) *evidence.Series { return &ev.Live },
		minAbs: 1 << 20,
	},
	{
		name: "rss_peak_bytes", unit: "bytes", label: "peak RSS",
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return float64(s.RSSPeakBytes), s.RSSPeakBytes > 0
		},
		over:   func(ev *evidence.Evidence, a, b time.Time) (float64, bool) { return extreme(&ev.RSS, a, b, false) },
		series: func(ev *evidence.Evidence) *evidence.Series { return &ev.RSS },
		minAbs: 1 << 20,
	},
	{
		name: "goroutines_peak", unit: "count", label: "goroutines (peak)",
		summary: func(s diagnose.Summary, ev *evidence.Evidence) (float64, bool) {
			return float64(s.GoroutinesPeak), !ev.Goroutines.Empty()
		},
		over: func(ev *evidence.Evidence, a, b time.Time) (float64, bool) {
			return extreme(&ev.Goroutines, a, b, false)
		},
		series: func(ev *evidence.Evidence) *evidence.Series { return &ev.Goroutines },
		minAbs: 5,
	},
}

// gcRate is GC cycles per second over [a, b], forced cycles (runtime.GC, goroutine leak
// checks) left out as the summary leaves them out.
func gcRate(ev *evidence.Evidence, a, b time.Time) (float64, bool) {
	n, ok := rate(ev, &ev.GCCycles, a, b)
	if !ok {
		return 0, false
	}
	forced, _ := rate(ev, &ev.GCForced, a, b)
	return math.Max(0, n-forced), true
}

// gcCPU is the GC's share of the process's CPU time over [a, b], or of GOMAXPROCS x wall time
// when the process's CPU time is unknown: the summary's GCCPUFraction.
func gcCPU(ev *evidence.Evidence, a, b time.Time) (float64, bool) {
	gc, ok := rate(ev, &ev.GCCPU, a, b)
	if !ok {
		return 0, false
	}
	// The runtime counts GC CPU in wall-clock time: the share of it the process's threads
	// spent waiting for a CPU (a busy machine) was not CPU, as in the summary.
	if run, ok := rate(ev, &ev.SchedRun, a, b); ok && run > 0 {
		if wait, ok := rate(ev, &ev.SchedWait, a, b); ok && wait >= 0 {
			gc *= run / (run + wait)
		}
	}
	base := &ev.AvailableCPU
	if ev.ProcessCPU.Rate() > 0 {
		base = &ev.ProcessCPU
	}
	used, ok := rate(ev, base, a, b)
	if !ok || used <= 0 {
		return 0, false
	}
	return math.Min(gc/used, 1), true
}

// assistShare is the share of GC CPU spent in mark assists over [a, b] (unknown without GC
// work in it).
func assistShare(ev *evidence.Evidence, a, b time.Time) (float64, bool) {
	gc, ok := rate(ev, &ev.GCCPU, a, b)
	if !ok || gc <= 0 {
		return 0, false
	}
	as, ok := rate(ev, &ev.GCAssist, a, b)
	if !ok {
		return 0, false
	}
	return math.Min(as/gc, 1), true
}
