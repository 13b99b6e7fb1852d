package diagnose

import "github.com/memdoctor/memdoctor/session"

// computeSummary derives the headline figures.
func computeSummary(in *Input) Summary {
	s := Summary{
		Samples:            len(in.Session.Samples),
		HeapProfiles:       len(in.Session.ProfilesOf(session.KindHeap, false)),
		GoroutineProfiles:  len(in.Session.ProfilesOf(session.KindGoroutine, false)),
		MemoryBudgetBytes:  in.Budget,
		MemoryBudgetSource: in.BudgetSource,
		CgroupLimitBytes:   in.CgroupLimit,
	}
	if rss := in.RSS(); len(rss) > 0 {
		peak, _ := maxPoint(rss)
		s.RSSPeakBytes = uint64(peak.V)
		s.RSSP99Bytes = uint64(percentile(values(rss), 99))
		s.RSSLatestBytes = uint64(rss[len(rss)-1].V)
	}
	for _, p := range in.Proc {
		if p.TreeRSSBytes > s.TreeRSSPeakBytes {
			s.TreeRSSPeakBytes, s.TreeProcs = p.TreeRSSBytes, p.TreeProcs
		}
	}
	if live, _ := in.LiveHeap(); len(live) > 0 {
		peak, _ := maxPoint(live)
		s.HeapLivePeakBytes = uint64(peak.V)
		s.HeapLiveLatestBytes = uint64(live[len(live)-1].V)
	}
	if goal, ok := maxPoint(in.HeapGoal()); ok {
		s.HeapGoalPeakBytes = uint64(goal.V)
	}
	gcSummary(in, &s)
	for _, g := range in.Go {
		if g.Goroutines > s.GoroutinesPeak {
			s.GoroutinesPeak = g.Goroutines
		}
		if g.Goroutines > 0 {
			s.GoroutinesLatest = g.Goroutines
		}
	}
	s.AllocBytesPerSecond = allocRate(in)
	return s
}

// gcSummary fills the GC figures from gctrace when the session has it (exact per cycle),
// else from runtime/metrics or MemStats readings. GC CPU is given against the process's own
// CPU time when that is known (what the GC costs the service), and against GOMAXPROCS x wall
// time (gctrace's own "%").
func gcSummary(in *Input, s *Summary) {
	secs := in.Seconds()
	var gcCPU, assist, avail float64
	switch n := len(in.Session.GC); {
	case n > 0:
		s.GCSource = "gctrace"
		s.GCCount = uint64(n)
		if secs > 0 {
			s.GCPerSecond = float64(n) / secs
		}
		for _, ev := range in.Session.GC {
			gcCPU += ev.GCCPU().Seconds()
			assist += ev.CPUAssist.Seconds()
		}
		avail = secs * float64(in.Session.GC[n-1].Procs)
	case len(in.Go) >= 2:
		first, last := in.Go[0], in.Go[len(in.Go)-1]
		s.GCSource = last.Source
		s.GCCount = last.GCCycles - min(first.GCCycles, last.GCCycles)
		if d := last.T.Sub(first.T).Seconds(); d > 0 {
			s.GCPerSecond = float64(s.GCCount) / d
		}
		avail = last.CPUTotalSeconds - first.CPUTotalSeconds
		gcCPU = (last.GCTotalSeconds - last.GCIdleSeconds) - (first.GCTotalSeconds - first.GCIdleSeconds)
		assist = last.GCAssistSeconds - first.GCAssistSeconds
		if avail <= 0 { // MemStats: only the fraction since the target started
			s.GCCPUFraction, s.GCCPUOfAvailableFraction = last.GCCPUFraction, last.GCCPUFraction
			return
		}
	case len(in.Go) == 1:
		s.GCSource = in.Go[0].Source
		s.GCCPUFraction, s.GCCPUOfAvailableFraction = in.Go[0].GCCPUFraction, in.Go[0].GCCPUFraction
		return
	default:
		return
	}
	if avail > 0 {
		s.GCCPUOfAvailableFraction = gcCPU / avail
	}
	s.GCCPUFraction = s.GCCPUOfAvailableFraction
	if used := in.processCPUSeconds(); used > 0 && gcCPU > 0 {
		s.GCCPUFraction = min(gcCPU/used, 1)
	}
	if gcCPU > 0 {
		s.GCAssistFraction = assist / gcCPU
	}
}

// processCPUSeconds is the CPU time (user + system) the target used over the window.
func (in *Input) processCPUSeconds() float64 {
	var first, last float64
	found := false
	for _, p := range in.Proc {
		if p.CPUSeconds <= 0 {
			continue
		}
		if !found {
			first, found = p.CPUSeconds, true
		}
		last = p.CPUSeconds
	}
	return last - first
}

// allocRate returns the heap allocation rate in bytes per second.
func allocRate(in *Input) float64 {
	var first, last *GoPoint
	for i := range in.Go {
		if in.Go[i].AllocBytesTotal == 0 {
			continue
		}
		if first == nil {
			first = &in.Go[i]
		}
		last = &in.Go[i]
	}
	if first != nil && last != first {
		if d := last.T.Sub(first.T).Seconds(); d > 0 && last.AllocBytesTotal >= first.AllocBytesTotal {
			return float64(last.AllocBytesTotal-first.AllocBytesTotal) / d
		}
	}
	totals := in.HeapTotals()
	if n := len(totals); n >= 2 {
		a, b := totals[0], totals[n-1]
		if d := b.T.Sub(a.T).Seconds(); d > 0 && b.AllocSpace >= a.AllocSpace {
			return float64(b.AllocSpace-a.AllocSpace) / d
		}
	}
	return 0
}

// gcCores is the GC's CPU use in cores (CPU-seconds per second) over the window. Shares of
// CPU mislead in a nearly idle process: a GC that takes half of almost nothing costs nothing.
func (in *Input) gcCores() float64 {
	procs := 0
	if n := len(in.Session.GC); n > 0 {
		procs = in.Session.GC[n-1].Procs
	}
	for i := len(in.Go) - 1; i >= 0 && procs == 0; i-- {
		procs = in.Go[i].GOMAXPROCS
	}
	return in.Summary().GCCPUOfAvailableFraction * float64(max(procs, 1))
}
