package evidence

// Quantities whose absence rules explain (keys of Evidence.Gaps).
const (
	GapRSS        = "rss"
	GapLive       = "live heap"
	GapGoroutines = "goroutines"
	GapGC         = "gc cycles"
	GapGCCPU      = "gc cpu"
	GapCPU        = "process cpu"
	GapHeapSnaps  = "heap profiles"
	GapAligned    = "aligned readings"
	GapBudget     = "memory budget"
	// GapNonGo: memory was split, but not into what Go holds and the rest (a source that
	// gives RSS without its anonymous part, such as Prometheus's process metrics).
	GapNonGo = "non-go memory"
)

// explainGaps says why each quantity the rules need is missing, from how the data was
// collected.
func (ev *Evidence) explainGaps() {
	local := ev.Target.Local
	pprof := ev.Target.PprofURL != ""
	agent := ev.Target.AgentURL != ""
	remote := "the process is not on this machine, or its /proc could not be read"
	if ev.RSS.Empty() {
		if local {
			ev.Gap(GapRSS, "no /proc readings were taken")
		} else {
			ev.Gap(GapRSS, remote)
		}
	}
	if ev.ProcessCPU.Empty() {
		if local {
			ev.Gap(GapCPU, "no /proc readings of the process's CPU time")
		} else {
			ev.Gap(GapCPU, remote)
		}
	}
	noGo := "no gctrace, no pprof endpoint and no memdoctor agent"
	switch {
	case pprof || agent:
		noGo = "the pprof endpoint or the agent gave no usable readings (see the notes)"
	case ev.GCLines > 0:
		noGo = "gctrace only"
	}
	if ev.Live.Empty() && ev.HeapInUse.Empty() {
		ev.Gap(GapLive, noGo)
	}
	if ev.Goroutines.Empty() {
		switch {
		case pprof || agent:
			ev.Gap(GapGoroutines, "the pprof endpoint or the agent gave no goroutine counts (see the notes)")
		default:
			ev.Gap(GapGoroutines, "no pprof endpoint and no memdoctor agent: goroutines were never counted")
		}
	}
	if ev.GCCycles.Len() < 2 {
		ev.Gap(GapGC, noGo)
	}
	if ev.GCCPU.Len() < 2 {
		switch {
		case ev.GCCycles.Len() >= 2 && ev.Target.Started.IsZero():
			ev.Gap(GapGCCPU, "MemStats gives the GC's CPU share since the process started, and its start time is unknown (the process is not local)")
		default:
			ev.Gap(GapGCCPU, noGo)
		}
	}
	if len(ev.PeriodicHeaps()) < 2 {
		if pprof || agent {
			ev.Gap(GapHeapSnaps, "fewer than two heap profiles were read (see the notes)")
		} else {
			ev.Gap(GapHeapSnaps, "no pprof endpoint and no memdoctor agent: no heap profiles")
		}
	}
	if ev.Aligned == 0 {
		switch {
		case ev.RSS.Empty():
			ev.Gaps[GapAligned] = ev.Gaps[GapRSS]
		case !ev.Pacer.HasGoMemory:
			ev.Gap(GapAligned, "no reading of the Go runtime's memory classes (pprof MemStats or the agent)")
		default:
			ev.Gap(GapAligned, "no Go reading was taken close enough to a /proc reading to split memory")
		}
	}
	if ev.Budget == 0 {
		ev.Gap(GapBudget, "no --memory-budget and no cgroup memory limit")
	}
}
