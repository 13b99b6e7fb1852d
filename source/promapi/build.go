package promapi

import (
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// Why the rules cannot see some quantities in Prometheus's standard metrics: quoted in the
// diagnosis's not_judged.
const (
	gapGCCPU = "Prometheus's standard Go metrics do not give the GC's CPU time (go_gc_duration_seconds counts only stop-the-world pauses): " +
		"expose runtime/metrics' /cpu/classes/gc/ (collectors.WithGoCollectorRuntimeMetrics) or run memdoctor watch on the service"
	gapNonGo = "Prometheus's process metrics give RSS but not its anonymous and LazyFree parts: memory outside Go cannot be told from the " +
		"binary and mapped files; memdoctor watch on the service's machine can"
	gapProfiles = "Prometheus holds metrics, not profiles: memdoctor watch on the service reads its heap profiles"
	gapBudget   = "the standard Go and process metrics carry no memory limit"
)

// evidence assembles the target's evidence from its readings.
func (b *build) evidence(cfg *Config) *evidence.Evidence {
	s := b.series
	start := s(qStart)
	ev := evidence.New("prometheus", evidence.Target{Name: b.labels.Name(), GoVersion: b.version}, evidence.Options{})
	if !start.Empty() {
		ev.Target.Started = unixSeconds(start.Last().V)
		ev.Restarts = restarts(&start)
	}
	ev.RSS, ev.ProcessCPU = s(qRSS), s(qProcessCPU)
	ev.Live, ev.HeapInUse, ev.HeapGoal, ev.HeapFree = s(qLive), s(qHeapInUse), s(qHeapGoal), s(qHeapFree)
	ev.RuntimeResident, ev.Stacks, ev.Goroutines = s(qRuntimeResident), s(qStacks), s(qGoroutines)
	ev.GCCycles, ev.GCForced, ev.GCCPU, ev.GCAssist = s(qGCCycles), s(qGCForced), s(qGCCPU), s(qGCAssist)
	ev.AvailableCPU, ev.AllocBytes, ev.AllocObjects = s(qAvailableCPU), s(qAllocBytes), s(qAllocObjects)
	ev.Samples = max(ev.RSS.Len(), ev.Goroutines.Len(), ev.HeapInUse.Len())
	b.pacer(ev, &start)
	if ev.Live.Empty() {
		b.liveFromGoal(ev)
	}
	if ev.GCCPU.Len() < 2 {
		b.gcCPUFromFraction(ev, &start)
	}
	b.split(ev)
	b.gaps(ev, cfg.MemoryBudgetBytes)
	ev.Finish(evidence.Options{MemoryBudgetBytes: cfg.MemoryBudgetBytes})
	for _, at := range []*breakdown.At{ev.Peak, ev.Latest} {
		if at != nil {
			at.SetLimits(nil, ev.Budget)
		}
	}
	return ev
}

// unixSeconds converts seconds since 1970 to a time.
func unixSeconds(v float64) time.Time {
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// restarts lists the times the process started again within the window: each rise of its
// start time.
func restarts(start *evidence.Series) []time.Time {
	var out []time.Time
	for i := 1; i < len(start.Points); i++ {
		if start.Points[i].V > start.Points[i-1].V+1 {
			out = append(out, unixSeconds(start.Points[i].V))
		}
	}
	return out
}

// pacer fills the pacer's inputs from their last readings.
func (b *build) pacer(ev *evidence.Evidence, start *evidence.Series) {
	p := &ev.Pacer
	last := func(q quantity) (float64, bool) {
		s := b.series(q)
		return s.Last().V, !s.Empty()
	}
	if v, ok := last(qGOGC); ok {
		p.GOGC = v
		if v < 0 || v >= 1<<62 { // off: -1, or its uint64 form
			p.GOGC = -1
		}
	}
	if v, ok := last(qGOMemLimit); ok && v > 0 && v < 1<<62 {
		p.GOMemLimit = v
	}
	if v, ok := last(qGOMAXPROCS); ok && v >= 1 && v < 1<<20 {
		p.GOMAXPROCS = int(v)
	}
	if v, ok := last(qNonHeap); ok {
		p.NonHeap = v
	}
	if scan := b.series(qScan); !scan.Empty() {
		vs := scan.Values()
		slices.Sort(vs)
		p.ScanBytes = vs[len(vs)/2]
	}
	p.HasGoMemory = !ev.HeapInUse.Empty()
}

// liveFromGoal derives the live heap from the GC's goal when the runtime does not report it
// (go_gc_heap_live_bytes is not a default metric): with GOGC on and no memory limit in the
// way, the pacer sets goal = live + (live + stacks + globals) x GOGC/100 at the end of each
// GC, so live = (goal - scan x GOGC/100) / (1 + GOGC/100), scan being the stacks and globals
// the GC scans (0 when not exported: a few hundred KiB in most programs, so the estimate is
// a little high). It is never above the heap in use of the same scrape. Without it, the
// rules would take the heap in use, whose GC sawtooth (up to twice the live heap at
// GOGC=100) reads as spikes and inflates the pacer model's live heap.
func (b *build) liveFromGoal(ev *evidence.Evidence) {
	gogcS, limitS, nonHeapS, scanS := b.series(qGOGC), b.series(qGOMemLimit), b.series(qNonHeap), b.series(qScan)
	if gogcS.Empty() || ev.HeapGoal.Empty() {
		return
	}
	live := evidence.NewGauge(evidence.SourcePrometheus, 0)
	for _, p := range ev.HeapGoal.Points {
		g, ok := gogcS.At(p.T)
		inUse, ok2 := ev.HeapInUse.At(p.T)
		if !ok || !ok2 || !inUse.T.Equal(p.T) || g.V <= 0 || g.V >= 1<<62 {
			continue // GOGC off (or unknown): only the memory limit sets the goal
		}
		if lim, ok := limitS.At(p.T); ok && lim.V > 0 && lim.V < 1<<62 {
			nh, _ := nonHeapS.At(p.T)
			if p.V >= 0.9*(lim.V-nh.V) {
				continue // the limit may be what set the goal
			}
		}
		f := g.V / 100
		scan := 0.0
		if sc, ok := scanS.At(p.T); ok {
			scan = sc.V
		}
		live.Add(p.T, math.Max(0, math.Min((p.V-scan*f)/(1+f), inUse.V)))
	}
	if live.Len() > 0 {
		ev.Live = live.Series()
		ev.Notes = append(ev.Notes, "the live heap is derived from the GC's goal and GOGC (go_memstats_next_gc_bytes, go_gc_gogc_percent): goal = live + (live + stacks + globals) x GOGC/100")
	}
}

// gcCPUFromFraction maps older clients' go_memstats_gc_cpu_fraction to cumulative GC CPU
// seconds, as the session does for MemStats: it needs the start time and GOMAXPROCS. The runtime
// computes the fraction at the end of each GC, of the CPU available from the start to then, so
// it is multiplied by the CPU available up to the last GC (go_memstats_last_gc_time_seconds),
// not up to the scrape: that would count GC time growing between cycles, and show a process
// whose GC did not run with its start-up's share as a GC busy now. Without the last GC's
// time, the scrape's is taken.
func (b *build) gcCPUFromFraction(ev *evidence.Evidence, start *evidence.Series) {
	frac, last := b.series(qGCCPUFraction), b.series(qLastGC)
	procs := ev.Pacer.GOMAXPROCS
	if frac.Empty() || start.Empty() || procs <= 0 {
		return
	}
	gc, avail := evidence.NewCounter(evidence.SourcePrometheus), evidence.NewCounter(evidence.SourcePrometheus)
	for _, p := range frac.Points {
		st, _ := start.At(p.T)
		began := unixSeconds(st.V)
		up := p.T.Sub(began).Seconds()
		if up <= 0 || p.V > 1 {
			continue
		}
		upToGC := up
		if l, ok := last.At(p.T); ok && l.T.Equal(p.T) && l.V > 0 {
			upToGC = min(up, unixSeconds(l.V).Sub(began).Seconds())
		}
		if upToGC < 0 {
			continue
		}
		gc.Add(p.T, p.V*upToGC*float64(procs))
		avail.Add(p.T, up*float64(procs))
	}
	if gc.Len() >= 2 {
		ev.GCCPU, ev.AvailableCPU = gc.Series(), avail.Series()
	}
}

// split maps the readings where RSS and the Go heap came from one scrape: the free heap the
// runtime retains and its share of RSS, and the split of memory at the RSS peak and at the
// end. What is outside Go stays unknown (see gapNonGo).
func (b *build) split(ev *evidence.Evidence) {
	share := b.series(qRetainedShare)
	var kept, retained []evidence.Point
	for _, p := range share.Points {
		free, ok := ev.HeapFree.At(p.T)
		if !ok || !free.T.Equal(p.T) {
			continue
		}
		kept = append(kept, p)
		retained = append(retained, free)
	}
	if len(kept) == 0 {
		return
	}
	ev.RetainedShare = evidence.Series{Points: kept, Src: share.Src, Res: share.Res}
	ev.Retained = evidence.Series{Points: retained, Src: ev.HeapFree.Src, Res: ev.HeapFree.Res}
	ev.Aligned = len(kept)
	if at, ok := b.at(ev, kept[len(kept)-1].T); ok {
		ev.Latest = &at
	}
	if peak, ok := ev.RSS.Max(); ok {
		if at, ok := b.at(ev, peak.T); ok {
			ev.Peak = &at
		}
	}
}

// at splits memory at t, from the readings of that scrape; the live heap is the one the
// runtime reports, else the lowest heap in use over the few minutes before (its level
// right after a GC).
func (b *build) at(ev *evidence.Evidence, t time.Time) (breakdown.At, bool) {
	exact := func(s *evidence.Series) (uint64, bool) {
		p, ok := s.At(t)
		if !ok || !p.T.Equal(t) {
			return 0, false
		}
		return uint64(p.V), true
	}
	rss, ok1 := exact(&ev.RSS)
	inUse, ok2 := exact(&ev.HeapInUse)
	if !ok1 || !ok2 {
		return breakdown.At{}, false
	}
	unusedS, releasedS, nonHeapS := b.series(qHeapUnused), b.series(qHeapReleased), b.series(qNonHeap)
	unused, _ := exact(&unusedS)
	released, _ := exact(&releasedS)
	nonHeap, _ := exact(&nonHeapS)
	free, _ := exact(&ev.HeapFree)
	stacks, _ := exact(&ev.Stacks)
	resident, _ := exact(&ev.RuntimeResident)
	g := session.GoMem{
		Source: "prometheus", HeapObjectsBytes: inUse, HeapUnusedBytes: unused, HeapFreeBytes: free,
		HeapReleasedBytes: released, HeapStacksBytes: stacks, MetadataBytes: nonHeap - min(stacks, nonHeap),
		TotalBytes: resident + released,
	}
	live, liveSrc := uint64(0), ""
	if l, ok := exact(&ev.Live); ok {
		g.HeapLiveBytes = l
	} else if pts := ev.HeapInUse.Between(t.Add(-3*time.Minute), t); len(pts) > 0 {
		lo := pts[0].V
		for _, p := range pts {
			lo = math.Min(lo, p.V)
		}
		live, liveSrc = uint64(lo), "prometheus (lowest heap in use over 3 minutes)"
	}
	at := breakdown.Compute(t, nil, &g, live, liveSrc)
	at.RSSBytes = rss
	return at, true
}

// gaps says why the rules cannot judge what Prometheus's metrics do not show. They are set
// before Finish, whose reasons speak of sessions.
func (b *build) gaps(ev *evidence.Evidence, budget uint64) {
	missing := func(metric, collector string) string {
		return "the target exports no " + metric + " (client_golang's " + collector + " collector)"
	}
	if ev.RSS.Empty() {
		ev.Gap(evidence.GapRSS, missing("process_resident_memory_bytes", "process"))
	}
	if ev.ProcessCPU.Empty() {
		ev.Gap(evidence.GapCPU, missing("process_cpu_seconds_total", "process"))
	}
	if ev.HeapInUse.Empty() && ev.Live.Empty() {
		ev.Gap(evidence.GapLive, missing("go_memstats_heap_alloc_bytes", "Go"))
	}
	if ev.Goroutines.Empty() {
		ev.Gap(evidence.GapGoroutines, "no valid reading of go_goroutines in the window")
	}
	if ev.GCCycles.Len() < 2 {
		ev.Gap(evidence.GapGC, missing("go_gc_duration_seconds", "Go"))
	}
	if ev.GCCPU.Len() < 2 {
		ev.Gap(evidence.GapGCCPU, gapGCCPU)
	}
	ev.Gap(evidence.GapHeapSnaps, gapProfiles)
	ev.Gap(evidence.GapNonGo, gapNonGo)
	if ev.Aligned == 0 {
		ev.Gap(evidence.GapAligned, "RSS (process_resident_memory_bytes) and the Go heap (go_memstats_heap_idle_bytes) were never read in one scrape")
	}
	if budget == 0 {
		ev.Gap(evidence.GapBudget, gapBudget)
	}
}
