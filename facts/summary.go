package facts

import (
	"math"

	"github.com/memdoctor/memdoctor/evidence"
)

// Summary holds the headline figures. Zero means "not measured" for every field but counts.
type Summary struct {
	// RSSPeakBytes is the most memory the process had resident: the kernel's high-water mark
	// (VmHWM) when it is above what the samples saw (RSSPeakSource says which: "samples",
	// "high-water mark"). RSSSampledPeakBytes is the highest sample.
	RSSPeakBytes        uint64 `json:"rss_peak_bytes"`
	RSSPeakSource       string `json:"rss_peak_source,omitempty"`
	RSSSampledPeakBytes uint64 `json:"rss_sampled_peak_bytes,omitempty"`
	// RSSPeakBeforeWindow is true when the high-water mark was already reached before the
	// window began.
	RSSPeakBeforeWindow bool   `json:"rss_peak_before_window,omitempty"`
	RSSP99Bytes         uint64 `json:"rss_p99_bytes"`
	RSSLatestBytes      uint64 `json:"rss_latest_bytes"`
	// TreeRSSPeakBytes is the peak RSS of the whole process tree memdoctor run started (the
	// target with, say, the go command above it); TreeProcs how many processes it had then.
	TreeRSSPeakBytes    uint64  `json:"tree_rss_peak_bytes,omitempty"`
	TreeProcs           int     `json:"tree_procs,omitempty"`
	HeapLivePeakBytes   uint64  `json:"heap_live_peak_bytes"`
	HeapLiveLatestBytes uint64  `json:"heap_live_latest_bytes"`
	HeapGoalPeakBytes   uint64  `json:"heap_goal_peak_bytes,omitempty"`
	GCCount             uint64  `json:"gc_count"`
	GCPerSecond         float64 `json:"gc_per_second"`
	// GCCPUFraction is the share of the process's CPU time spent on GC (mark assists, background
	// and pauses; idle marking excluded), or of GCCPUOfAvailableFraction's base when the
	// process's CPU time is unknown.
	GCCPUFraction float64 `json:"gc_cpu_fraction"`
	// GCCPUOfAvailableFraction is GC CPU over GOMAXPROCS x wall time, like gctrace's "%".
	GCCPUOfAvailableFraction float64 `json:"gc_cpu_of_available_fraction"`
	// GCAssistFraction is the share of GC CPU spent in mark assists (0 when unknown).
	GCAssistFraction float64 `json:"gc_assist_fraction,omitempty"`
	// CPUContention is the share of the time the process's threads were runnable that they
	// waited for a CPU (/proc schedstat; 0 when unknown). GC CPU, which the Go runtime
	// measures in wall-clock time, is corrected by it: a busy machine does not make the GC
	// look more expensive.
	CPUContention       float64 `json:"cpu_contention,omitempty"`
	AllocBytesPerSecond float64 `json:"alloc_bytes_per_second,omitempty"`
	GoroutinesPeak      int     `json:"goroutines_peak"`
	GoroutinesLatest    int     `json:"goroutines_latest,omitempty"`
	MemoryBudgetBytes   uint64  `json:"memory_budget_bytes,omitempty"`
	MemoryBudgetSource  string  `json:"memory_budget_source,omitempty"`
	CgroupLimitBytes    uint64  `json:"cgroup_limit_bytes,omitempty"`
	// GCForcedCount counts forced cycles (runtime.GC, goroutine leak checks): they are not in
	// GCPerSecond.
	GCForcedCount uint64 `json:"gc_forced_count,omitempty"`
	// Where the figures came from.
	GCSource          string `json:"gc_source,omitempty"` // gctrace, runtime/metrics, memstats
	Samples           int    `json:"samples"`
	HeapProfiles      int    `json:"heap_profiles"`
	GoroutineProfiles int    `json:"goroutine_profiles"`
}

// Summarize derives the headline figures from the evidence.
func Summarize(ev *evidence.Evidence) Summary {
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
		s.RSSP99Bytes = uint64(Percentile(ev.RSS.Values(), 99))
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
