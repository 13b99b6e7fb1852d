package facts

import (
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/evidence"
)

// The evidence's types the rules read, named here so that rules need nothing but this
// package.
type (
	Point          = evidence.Point
	Series         = evidence.Series
	Source         = evidence.Source
	Snapshot       = evidence.Snapshot
	Target         = evidence.Target
	Pacer          = evidence.Pacer
	Assists        = evidence.Assists
	Site           = evidence.Site
	SiteTable      = evidence.SiteTable
	SiteDiff       = evidence.SiteDiff
	SiteDelta      = evidence.SiteDelta
	Caller         = evidence.Caller
	GoroutineGroup = evidence.GoroutineGroup
	StackGroup     = evidence.StackGroup
	// Split is resident memory split into where it goes, at one instant.
	Split = breakdown.At
)

// The sources the rules tell apart.
const (
	SourceGCTrace        = evidence.SourceGCTrace
	SourceRuntimeMetrics = evidence.SourceRuntimeMetrics
	SourceHeapProfile    = evidence.SourceHeapProfile
)

// Quantities whose absence the rules explain (keys of Facts.Gaps).
const (
	GapRSS        = evidence.GapRSS
	GapLive       = evidence.GapLive
	GapGoroutines = evidence.GapGoroutines
	GapGC         = evidence.GapGC
	GapGCCPU      = evidence.GapGCCPU
	GapHeapSnaps  = evidence.GapHeapSnaps
	GapAligned    = evidence.GapAligned
	GapBudget     = evidence.GapBudget
	GapNonGo      = evidence.GapNonGo
)

// Facts is everything the rules read, computed once. Its series and snapshots are the
// evidence's (see package evidence), shared: nothing may change them.
type Facts struct {
	// The window, and what was watched.
	Start, End time.Time
	Target     Target
	// Session is the session directory the evidence was read from ("" for other sources).
	Session string
	// Mode says what recorded the evidence: "run", "watch", "demo", "agent" (sessions),
	// "profiles" or "prometheus": what can be done about the target afterwards.
	Mode string
	// Budget is what the service may use (0 = unknown), BudgetSource where it came from.
	Budget       uint64
	BudgetSource string
	// OOMKills counts the kernel's OOM kills in the process's cgroup.
	OOMKills uint64
	// OOMKill is the end of the target that the OOM killer is behind, when there is one.
	OOMKill *OOMKill
	// Holders is who keeps the heap's objects alive, when memdoctor read the target's heap,
	// and whether the target can still be read.
	Holders Holders
	// Gaps says, for a quantity, why it could not be measured.
	Gaps    map[string]string
	Pacer   Pacer
	Summary Summary

	// The canonical series.
	RSS, Live, HeapInUse, HeapGoal, Stacks, Goroutines, GCCycles, AllocBytes Series
	NonGo, NonGoShare, Retained, RetainedShare                               Series
	// Aligned counts the readings where memory was split; Splits is memory split over time,
	// LastSplit the last split with both sides known (nil when none).
	Aligned   int
	Splits    []Split
	LastSplit *Split

	// The profiles, in time order.
	Heaps, PeriodicHeaps []Snapshot
	// Assists is what execution traces say about mark assists (nil without traces).
	Assists *Assists

	// What the rules stand on, derived from the above.
	Spikes       []Spike
	SpikeSeries  SpikeSeries
	LiveReadings LiveReadings
	// LiveSeen is, when the live heap comes from heap profiles, when its last reading was
	// most likely measured (see evidence.Evidence.LiveSeen).
	LiveSeen time.Time
	// Growth is what grew between the first and last settled periodic heap profiles (nil
	// without two); LeakSites what grew between the first and last periodic ones.
	Growth    *HeapGrowth
	LeakSites LeakSites
	// InFlight are the sites holding a spike's height at the GCs the settled periodic heap
	// profiles saw, with what they allocated between them.
	InFlight []InFlight
	Resident Resident
	GC       GC
	// RSSFloor and RSSSettledFloor are resident memory's lows, from the start and once the
	// process settled.
	RSSFloor, RSSSettledFloor []Point
	NonGoFloor                []Point
	// AllocRates is the allocation rate over about ten slices once the process settled.
	AllocRates []Point
	// SpikeAllocs is what was allocated around the highest spikes, and Background what each
	// site allocates anyway (bytes per second, its least rate between periodic snapshots),
	// the observer's stacks left out (culprit.Observer).
	SpikeAllocs []SpikeAlloc
	Background  map[string]float64
	// ObserverBackground is what the observer's stacks allocate anyway, in all (bytes per
	// second, their least rate between periodic snapshots).
	ObserverBackground float64

	Alloc    Alloc
	Cost     Cost
	HeapSnap *HeapSnapshot
	// LastHeap is the last heap profile read as HeapSnap reads the only one, when there are
	// several: what they show at the end, when they are too close together for a trend.
	LastHeap  *HeapSnapshot
	Goroutine Goroutines
}

// Of computes the facts of an evidence: every profile the rules may read is read here.
func Of(ev *evidence.Evidence) *Facts {
	sum := Summarize(ev)
	f := &Facts{
		Start: ev.Start, End: ev.End, Target: ev.Target, Session: ev.Session, Mode: ev.Mode, Budget: ev.Budget, BudgetSource: ev.BudgetSource,
		OOMKills: ev.OOMKills, Gaps: ev.Gaps, Pacer: ev.Pacer, Summary: sum,
		RSS: ev.RSS, Live: ev.Live, HeapInUse: ev.HeapInUse, HeapGoal: ev.HeapGoal, Stacks: ev.Stacks,
		Goroutines: ev.Goroutines, GCCycles: ev.GCCycles, AllocBytes: ev.AllocBytes,
		NonGo: ev.NonGo, NonGoShare: ev.NonGoShare, Retained: ev.Retained, RetainedShare: ev.RetainedShare,
		Aligned: ev.Aligned, Splits: ev.Splits, LastSplit: lastAligned(ev),
		Heaps: ev.Heaps, PeriodicHeaps: ev.PeriodicHeaps(), LiveSeen: ev.LiveSeen,
	}
	f.SpikeSeries = spikeSeriesOf(ev)
	f.Spikes = findSpikes(ev, f.SpikeSeries)
	f.LiveReadings = liveOf(ev, f.Spikes)
	f.Resident = residentOf(ev)
	f.GC = Cadence(ev, sum)
	f.RSSFloor, f.RSSSettledFloor = Floor(ev.RSS.Points), Floor(settled(ev, ev.RSS.Points))
	f.NonGoFloor = Floor(ev.NonGo.Points)
	f.AllocRates = settled(ev, Rates(ev.AllocBytes.Points))
	// The profiles, in the order the rules read them.
	f.Growth = heapGrowthOf(ev)
	f.LeakSites = leakSitesOf(ev)
	f.InFlight = inFlightOf(ev, settledSnaps(ev, f.PeriodicHeaps))
	f.Goroutine = goroutinesOf(ev)
	if sd := f.Goroutine.Shutdown; sd != nil {
		f.Goroutines.Points = before(f.Goroutines.Points, sd.At)
	}
	if len(ev.Heaps) >= 2 && len(f.Spikes) > 0 {
		f.Background, f.ObserverBackground = leastAllocRate(ev, f.PeriodicHeaps)
		f.SpikeAllocs = spikeAllocsOf(ev, f.Spikes)
	}
	f.Assists = ev.Assists()
	f.HeapSnap = heapSnapshotOf(ev)
	if n := len(ev.Heaps); n > 1 {
		f.LastHeap = heapSnapshotAt(ev, ev.Heaps[n-1])
	}
	f.Alloc = allocOf(ev)
	f.Cost = costOf(ev)
	f.OOMKill = oomKillOf(ev)
	f.Holders = holdersOf(ev)
	return f
}

// Window is the window's length.
func (f *Facts) Window() time.Duration { return f.End.Sub(f.Start) }

// Seconds is the window's length in seconds.
func (f *Facts) Seconds() float64 { return f.End.Sub(f.Start).Seconds() }

// lastAligned is the last split of memory with both sides known (nil when none): the last
// /proc reading may have no Go reading close enough.
func lastAligned(ev *evidence.Evidence) *Split {
	for i := len(ev.Splits) - 1; i >= 0; i-- {
		if a := &ev.Splits[i]; a.GoSource != "" && a.RSSBytes > 0 {
			return a
		}
	}
	return nil
}
