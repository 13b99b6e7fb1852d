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
// else from runtime/metrics or MemStats readings.
func gcSummary(in *Input, s *Summary) {
	secs := in.Seconds()
	if n := len(in.Session.GC); n > 0 {
		s.GCSource = "gctrace"
		s.GCCount = uint64(n)
		if secs > 0 {
			s.GCPerSecond = float64(n) / secs
		}
		var gcCPU, assist, avail float64
		procs := in.Session.GC[n-1].Procs
		for _, ev := range in.Session.GC {
			gcCPU += ev.GCCPU().Seconds()
			assist += ev.CPUAssist.Seconds()
		}
		avail = secs * float64(procs)
		if avail > 0 {
			s.GCCPUFraction = gcCPU / avail
		}
		if gcCPU > 0 {
			s.GCAssistFraction = assist / gcCPU
		}
		return
	}
	if len(in.Go) < 2 {
		if len(in.Go) == 1 {
			s.GCSource = in.Go[0].Source
			s.GCCPUFraction = in.Go[0].GCCPUFraction
		}
		return
	}
	first, last := in.Go[0], in.Go[len(in.Go)-1]
	s.GCSource = last.Source
	s.GCCount = last.GCCycles - min(first.GCCycles, last.GCCycles)
	if d := last.T.Sub(first.T).Seconds(); d > 0 {
		s.GCPerSecond = float64(s.GCCount) / d
	}
	cpu := last.CPUTotalSeconds - first.CPUTotalSeconds
	gc := (last.GCTotalSeconds - last.GCIdleSeconds) - (first.GCTotalSeconds - first.GCIdleSeconds)
	switch {
	case cpu > 0:
		s.GCCPUFraction = gc / cpu
		if gc > 0 {
			s.GCAssistFraction = (last.GCAssistSeconds - first.GCAssistSeconds) / gc
		}
	default:
		s.GCCPUFraction = last.GCCPUFraction // MemStats: since the target started
	}
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
