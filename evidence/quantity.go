package evidence

import (
	"slices"

	"github.com/memdoctor/memdoctor/session"
)

// quantity names one canonical series of the evidence. The table quantities describes each
// one: the Evidence field that holds it, its unit, the sources that may measure it in order
// of preference, how a session's sample gives it, and why it is missing when rules need it.
// The builders, the series a session or New fills, the window, the gaps and the tests all
// walk that table: a new quantity is one entry, its field in Evidence and its reader.
type quantity uint8

const (
	qRSS quantity = iota
	qHWM
	qRSSAnon
	qRSSFile
	qLazyFree
	qTreeRSS
	qProcessCPU
	qCgroupUsage
	qLive
	qHeapInUse
	qHeapAtGC
	qHeapGoal
	qHeapFree
	qRuntimeResident
	qStacks
	qGoroutines
	qLeaked
	qGCCycles
	qGCForced
	qGCCPU
	qGCAssist
	qAvailableCPU
	qAllocBytes
	qAllocObjects
	qSchedRun
	qSchedWait
	qNonGo
	qNonGoShare
	qRetained
	qRetainedShare
	qReleasedResident
	nQuantities
)

// Units of the quantities.
const (
	unitBytes   = "bytes"
	unitSeconds = "seconds"
	unitCount   = "count"
	unitRatio   = "ratio" // a share, 0 to 1
)

// desc describes one quantity.
type desc struct {
	name    string // the Evidence field that holds its series
	unit    string
	counter bool // cumulative: kept monotonic, a restart continues from the last reading
	// sources may measure it, in order of preference (see multi.best): the finer and truer
	// first. A session's samples, its gctrace cycles, its profiles and the split of memory
	// give only these.
	sources []Source
	// lead are sources of the very same figure as the first of sources: when that one's
	// readings start late (a program whose memory memdoctor began to read when its pprof
	// stopped answering), theirs from before lead its series (see multi.bestLed).
	lead []Source
	// follow are sources of the very same figure as runtime/metrics, read another way: when
	// the agent's readings stop or leave holes (an agent starved of CPU by the service), theirs
	// continue its series where it has none (see multi.continued and joined.go).
	follow []Source
	// outlast are sources of the same quantity at another level (the goroutine count, see
	// joined.go): when the agent's readings end early and one of these reads on past them,
	// its series is taken instead (see multi.outlasted).
	outlast []Source
	series  func(*Evidence) *Series
	// sample reads it from a session's sample (nil: no sample carries it).
	sample func(r *reading)
	// gap, when set, says why it is missing, for the rules that need it.
	gap *gap
}

// gap is why a quantity the rules need was not measured, under a key of Evidence.Gaps.
type gap struct {
	key string
	min int // fewer readings than this count as none (a counter needs two)
	// why is the reason, from how the data was collected; "" when it is not missing after
	// all (another quantity stands in for it).
	why func(ev *Evidence) string
}

// The sources of each quantity, in order of preference.
var (
	fromProc    = []Source{SourceProc}
	fromGo      = []Source{SourceRuntimeMetrics, SourceProcessMemory, SourceMemStats, SourcePrometheus, SourceUnknown}
	fromGoOrGC  = []Source{SourceRuntimeMetrics, SourceProcessMemory, SourceGCTrace, SourceMemStats, SourcePrometheus, SourceUnknown}
	fromGoOrHP  = []Source{SourceRuntimeMetrics, SourceProcessMemory, SourceMemStats, SourceHeapProfile, SourcePrometheus, SourceUnknown}
	liveSources = []Source{SourceRuntimeMetrics, SourceProcessMemory, SourceGCTrace, SourceMemStats, SourceHeapProfile, SourcePrometheus, SourceUnknown}
)

// quantities is the table of quantities, in the order of Evidence's fields.
var quantities = [nQuantities]desc{
	qRSS: {name: "RSS", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.RSS },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return float64(p.RSSBytes), true }),
		gap:    &gap{key: GapRSS, min: 1, why: procGap("no /proc readings were taken")}},
	qHWM: {name: "HWM", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.HWM },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return float64(p.HWMBytes), p.HWMBytes > 0 })},
	qRSSAnon: {name: "RSSAnon", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.RSSAnon },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return float64(p.RSSAnonBytes), true })},
	qRSSFile: {name: "RSSFile", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.RSSFile },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return float64(p.RSSFileBytes + p.RSSShmemBytes), true })},
	qLazyFree: {name: "LazyFree", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.LazyFree },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return float64(p.LazyFreeBytes), true })},
	qTreeRSS: {name: "TreeRSS", unit: unitBytes, sources: fromProc, series: func(ev *Evidence) *Series { return &ev.TreeRSS },
		sample: readTreeRSS},
	qProcessCPU: {name: "ProcessCPU", unit: unitSeconds, counter: true, sources: fromProc,
		series: func(ev *Evidence) *Series { return &ev.ProcessCPU },
		sample: procFigure(func(p *session.Proc) (float64, bool) { return p.CPUSeconds, p.CPUSeconds > 0 }),
		gap:    &gap{key: GapCPU, min: 1, why: procGap("no /proc readings of the process's CPU time")}},
	qCgroupUsage: {name: "CgroupUsage", unit: unitBytes, sources: []Source{SourceCgroup},
		series: func(ev *Evidence) *Series { return &ev.CgroupUsage }, sample: readCgroupUsage},

	qLive: {name: "Live", unit: unitBytes, sources: liveSources, series: func(ev *Evidence) *Series { return &ev.Live },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.HeapLiveBytes), g.HeapLiveBytes > 0 }),
		gap:    &gap{key: GapLive, min: 1, why: liveGap}},
	qHeapInUse: {name: "HeapInUse", unit: unitBytes, sources: fromGo, series: func(ev *Evidence) *Series { return &ev.HeapInUse },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.HeapObjectsBytes), g.TotalBytes > 0 })},
	qHeapAtGC: {name: "HeapAtGC", unit: unitBytes, sources: []Source{SourceGCTrace},
		series: func(ev *Evidence) *Series { return &ev.HeapAtGC }},
	qHeapGoal: {name: "HeapGoal", unit: unitBytes, sources: fromGoOrGC, series: func(ev *Evidence) *Series { return &ev.HeapGoal },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.HeapGoalBytes), g.HeapGoalBytes > 0 })},
	qHeapFree: {name: "HeapFree", unit: unitBytes, sources: fromGo, series: func(ev *Evidence) *Series { return &ev.HeapFree },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.HeapFreeBytes), g.TotalBytes > 0 })},
	qRuntimeResident: {name: "RuntimeResident", unit: unitBytes, sources: fromGo,
		series: func(ev *Evidence) *Series { return &ev.RuntimeResident },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.RuntimeResident()), g.TotalBytes > 0 })},
	qStacks: {name: "Stacks", unit: unitBytes, sources: fromGo, series: func(ev *Evidence) *Series { return &ev.Stacks },
		sample: goFigure(func(g *session.GoMem) (float64, bool) {
			return float64(g.HeapStacksBytes + g.OSStacksBytes), g.TotalBytes > 0
		})},
	qGoroutines: {name: "Goroutines", unit: unitCount,
		sources: []Source{SourceRuntimeMetrics, SourceProcessMemory, SourcePprofIndex, SourceGoroutineProfile, SourcePrometheus, SourceUnknown},
		// runtime.NumGoroutine, whether read from the process's memory, the index page or a
		// goroutine profile's total.
		lead:    []Source{SourcePprofIndex, SourceGoroutineProfile},
		outlast: []Source{SourceProcessMemory},
		series:  func(ev *Evidence) *Series { return &ev.Goroutines }, sample: readGoroutines,
		gap: &gap{key: GapGoroutines, min: 1, why: goroutinesGap}},
	qLeaked: {name: "Leaked", unit: unitCount, sources: []Source{SourcePprofIndex, SourceLeakProfile},
		series: func(ev *Evidence) *Series { return &ev.Leaked }, sample: readLeaked},

	qGCCycles: {name: "GCCycles", unit: unitCount, counter: true, sources: fromGoOrGC,
		series: func(ev *Evidence) *Series { return &ev.GCCycles },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.GCCycles), g.GCCycles > 0 || g.TotalBytes > 0 }),
		gap:    &gap{key: GapGC, min: 2, why: (*Evidence).noGoReason}},
	qGCForced: {name: "GCForced", unit: unitCount, counter: true, sources: fromGoOrGC,
		series: func(ev *Evidence) *Series { return &ev.GCForced },
		sample: goFigure(func(g *session.GoMem) (float64, bool) {
			return float64(g.GCForcedCycles), g.GCCycles > 0 || g.TotalBytes > 0
		})},
	qGCCPU: {name: "GCCPU", unit: unitSeconds, counter: true, sources: fromGoOrGC,
		series: func(ev *Evidence) *Series { return &ev.GCCPU }, sample: readGCCPU,
		gap: &gap{key: GapGCCPU, min: 2, why: gcCPUGap}},
	qGCAssist: {name: "GCAssist", unit: unitSeconds, counter: true, sources: fromGoOrGC,
		series: func(ev *Evidence) *Series { return &ev.GCAssist },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return g.GCAssistSeconds, cpuClasses(g) })},
	qAvailableCPU: {name: "AvailableCPU", unit: unitSeconds, counter: true, sources: fromGoOrGC,
		series: func(ev *Evidence) *Series { return &ev.AvailableCPU }, sample: readAvailableCPU},
	qAllocBytes: {name: "AllocBytes", unit: unitBytes, counter: true, sources: fromGoOrHP,
		series: func(ev *Evidence) *Series { return &ev.AllocBytes },
		sample: goFigure(func(g *session.GoMem) (float64, bool) { return float64(g.AllocBytesTotal), g.AllocBytesTotal > 0 })},
	qAllocObjects: {name: "AllocObjects", unit: unitCount, counter: true, sources: fromGoOrHP,
		series: func(ev *Evidence) *Series { return &ev.AllocObjects },
		sample: goFigure(func(g *session.GoMem) (float64, bool) {
			return float64(g.AllocObjectsTotal), g.AllocObjectsTotal > 0
		})},
	qSchedRun: {name: "SchedRun", unit: unitSeconds, counter: true, sources: fromProc,
		series: func(ev *Evidence) *Series { return &ev.SchedRun },
		sample: schedFigure(func(s *session.Sched) float64 { return s.RunSeconds })},
	qSchedWait: {name: "SchedWait", unit: unitSeconds, counter: true, sources: fromProc,
		series: func(ev *Evidence) *Series { return &ev.SchedWait },
		sample: schedFigure(func(s *session.Sched) float64 { return s.WaitSeconds })},

	// The split of memory: from a Go reading and a /proc reading paired (see pairing).
	qNonGo: {name: "NonGo", unit: unitBytes, sources: fromGo, series: func(ev *Evidence) *Series { return &ev.NonGo }},
	qNonGoShare: {name: "NonGoShare", unit: unitRatio, sources: fromGo,
		series: func(ev *Evidence) *Series { return &ev.NonGoShare }},
	qRetained: {name: "Retained", unit: unitBytes, sources: fromGo, series: func(ev *Evidence) *Series { return &ev.Retained }},
	qRetainedShare: {name: "RetainedShare", unit: unitRatio, sources: fromGo,
		series: func(ev *Evidence) *Series { return &ev.RetainedShare }},
	qReleasedResident: {name: "ReleasedResident", unit: unitBytes, sources: fromGo,
		series: func(ev *Evidence) *Series { return &ev.ReleasedResident }},
}

func init() {
	// Every quantity runtime/metrics and the process's memory both give is the same runtime
	// record read two ways (joined.go), but those the memory outlasts at another level (the
	// goroutine count).
	for q := range quantities {
		d := &quantities[q]
		if len(d.outlast) == 0 && slices.Contains(d.sources, SourceRuntimeMetrics) && slices.Contains(d.sources, SourceProcessMemory) {
			d.follow = []Source{SourceProcessMemory}
		}
	}
}

// quantum is the resolution of a reading of d from src: gctrace prints whole MiB, counts
// are whole; counters keep none.
func (d *desc) quantum(src Source) float64 {
	switch {
	case d.counter:
		return 0
	case d.unit == unitCount:
		return 1
	case d.unit == unitBytes && src == SourceGCTrace:
		return mib
	}
	return 0
}

// fromGCOrProfiles reports a quantity that gctrace cycles or profiles give: evidence built
// with New gets it from AddGCCycle and AddSnapshot as a session does, besides what its source
// set directly (see finishNew).
func (d *desc) fromGCOrProfiles() bool {
	for _, s := range d.sources {
		switch s {
		case SourceGCTrace, SourceHeapProfile, SourceGoroutineProfile, SourceLeakProfile:
			return true
		}
	}
	return false
}

// allSeries lists every canonical series.
func (ev *Evidence) allSeries() []*Series {
	out := make([]*Series, nQuantities)
	for q := range quantities {
		out[q] = quantities[q].series(ev)
	}
	return out
}
