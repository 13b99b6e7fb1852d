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
// collected: the series the table of quantities gives a gap, then the profiles, the split of
// memory and the budget.
func (ev *Evidence) explainGaps() {
	for q := range quantities {
		d := &quantities[q]
		if d.gap == nil || d.series(ev).Len() >= d.gap.min {
			continue
		}
		if why := d.gap.why(ev); why != "" {
			ev.Gap(d.gap.key, why)
		}
	}
	pprof := ev.Target.PprofURL != ""
	agent := ev.Target.AgentURL != ""
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

// procGap is why a /proc figure is missing: local says why for a process on this machine.
func procGap(local string) func(*Evidence) string {
	return func(ev *Evidence) string {
		if ev.Target.Local {
			return local
		}
		return "the process is not on this machine, or its /proc could not be read"
	}
}

// noGoReason is why a figure of the Go runtime is missing.
func (ev *Evidence) noGoReason() string {
	switch {
	case ev.Target.PprofURL != "" || ev.Target.AgentURL != "":
		return "the pprof endpoint or the agent gave no usable readings (see the notes)"
	case ev.GCLines > 0:
		return "gctrace only"
	}
	return "no gctrace, no pprof endpoint and no memdoctor agent"
}

// liveGap: the heap in use stands in for a live heap nothing measured.
func liveGap(ev *Evidence) string {
	if !ev.HeapInUse.Empty() {
		return ""
	}
	return ev.noGoReason()
}

func goroutinesGap(ev *Evidence) string {
	if ev.Target.PprofURL != "" || ev.Target.AgentURL != "" {
		return "the pprof endpoint or the agent gave no goroutine counts (see the notes)"
	}
	return "no pprof endpoint and no memdoctor agent: goroutines were never counted"
}

func gcCPUGap(ev *Evidence) string {
	if ev.GCCycles.Len() >= 2 && ev.Target.Started.IsZero() {
		return "MemStats gives the GC's CPU share since the process started, and its start time is unknown (the process is not local)"
	}
	return ev.noGoReason()
}
