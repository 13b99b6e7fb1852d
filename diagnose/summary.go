package diagnose

import (
	"math"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/evidence"
)

// Breakdown splits resident memory into where it goes, at the RSS peak and at the end.
type Breakdown struct {
	Peak   *breakdown.At `json:"peak,omitempty"`
	Latest *breakdown.At `json:"latest,omitempty"`
}

// computeSummary derives the headline figures from the evidence.
func computeSummary(ev *evidence.Evidence) Summary {
	s := Summary{
		Samples:            ev.Samples,
		HeapProfiles:       len(ev.Heaps),
		GoroutineProfiles:  len(ev.GoroutineSnaps),
		MemoryBudgetBytes:  ev.Budget,
		MemoryBudgetSource: ev.BudgetSource,
		CgroupLimitBytes:   ev.CgroupLimit,
		TreeProcs:          ev.TreeProcs,
	}
	if peak, ok := ev.RSS.Max(); ok {
		s.RSSSampledPeakBytes = uint64(peak.V)
		s.RSSPeakBytes, s.RSSPeakSource = s.RSSSampledPeakBytes, "samples"
		s.RSSP99Bytes = uint64(percentile(ev.RSS.Values(), 99))
		s.RSSLatestBytes = uint64(ev.RSS.Last().V)
	}
	// The kernel's high-water mark sees peaks between samples: a limit sized from the
	// sampled peak alone gets OOM-killed.
	if hwm, ok := ev.HWM.Max(); ok && uint64(hwm.V) > s.RSSPeakBytes {
		s.RSSPeakBytes, s.RSSPeakSource = uint64(hwm.V), "high-water mark"
		s.RSSPeakBeforeWindow = ev.HWM.First().V >= hwm.V
	}
	if tree, ok := ev.TreeRSS.Max(); ok {
		s.TreeRSSPeakBytes = uint64(tree.V)
	}
	if live, ok := ev.Live.Max(); ok {
		s.HeapLivePeakBytes = uint64(live.V)
		s.HeapLiveLatestBytes = uint64(ev.Live.Last().V)
	}
	if goal, ok := ev.HeapGoal.Max(); ok {
		s.HeapGoalPeakBytes = uint64(goal.V)
	}
	gcSummary(ev, &s)
	if g, ok := ev.Goroutines.Max(); ok {
		s.GoroutinesPeak = int(g.V)
		s.GoroutinesLatest = int(ev.Goroutines.Last().V)
	}
	s.AllocBytesPerSecond = ev.AllocBytes.Rate()
	return s
}

// gcSummary fills the GC figures: cycles and their rate (forced cycles apart), and GC CPU
// against the process's own CPU time when that is known (what the GC costs the service), and
// against GOMAXPROCS x wall time (gctrace's own "%").
func gcSummary(ev *evidence.Evidence, s *Summary) {
	cycles := ev.GCCycles
	if cycles.Len() == 0 {
		return
	}
	s.GCSource = cycles.Src.String()
	n, forced := cycles.Increase(), ev.GCForced.Increase()
	s.GCCount, s.GCForcedCount = uint64(n), uint64(math.Min(forced, n))
	if d := cycles.Span().Seconds(); d > 0 {
		s.GCPerSecond = math.Max(0, cycles.Increase()-ev.GCForced.Increase()) / d
	}
	s.CPUContention = ev.Contention()
	gcRate := gcCores(ev) // CPU seconds per second
	if avail := ev.AvailableCPU.Rate(); avail > 0 && ev.GCCPU.Len() >= 2 {
		s.GCCPUOfAvailableFraction = math.Min(gcRate/avail, 1)
	}
	s.GCCPUFraction = s.GCCPUOfAvailableFraction
	if used := ev.ProcessCPU.Rate(); used > 0 && ev.GCCPU.Len() >= 2 {
		s.GCCPUFraction = math.Min(gcRate/used, 1)
	}
	if gc := ev.GCCPU.Increase(); gc > 0 && ev.GCAssist.Len() >= 2 {
		s.GCAssistFraction = math.Min(ev.GCAssist.Increase()/gc, 1)
	}
}

// gcCores is the GC's CPU use in cores (CPU-seconds per second) over the window. Shares of
// CPU mislead in a nearly idle process: a GC that takes half of almost nothing costs nothing.
func gcCores(ev *evidence.Evidence) float64 {
	if ev.GCCPU.Len() < 2 {
		return 0
	}
	// The runtime counts wall-clock time on a P: the share of it the threads spent waiting for
	// a CPU was not CPU.
	return ev.GCCPU.Rate() * (1 - ev.Contention())
}

// gcCPUKnown reports whether the GC's CPU cost was measured.
func gcCPUKnown(ev *evidence.Evidence) bool { return ev.GCCPU.Len() >= 2 && ev.GCCPU.Span() > 0 }

// lastAligned is the last split of memory with both sides known (nil when none): the last
// /proc reading may have no Go reading close enough.
func lastAligned(ev *evidence.Evidence) *breakdown.At {
	for i := len(ev.Splits) - 1; i >= 0; i-- {
		if a := &ev.Splits[i]; a.GoSource != "" && a.RSSBytes > 0 {
			return a
		}
	}
	return nil
}
