package evidence

import "time"

// New returns an empty Evidence for a source other than a session (a folder of profiles, a
// Prometheus range): fill its series with Builders and its snapshots with AddSnapshot, then
// call Finish.
func New(mode string, target Target, opts Options) *Evidence {
	return &Evidence{Mode: mode, Target: target, profiles: newStore(opts.MaxProfileBytes, target.MainModule)}
}

// Builder accumulates readings of one quantity from one source into a bounded Series, as
// FromSession does: readings may arrive slightly out of time order; past 4096 time slices
// each keeps its lowest and highest reading.
type Builder struct{ b *builder }

// NewGauge returns a Builder of a quantity that goes up and down (bytes, a count), whose
// values have the given resolution (0 = exact).
func NewGauge(src Source, quantum float64) *Builder { return &Builder{newBuilder(src, quantum)} }

// NewCounter returns a Builder of a cumulative counter, kept monotonic: a reading below the
// previous one (a restart from zero) continues from it.
func NewCounter(src Source) *Builder { return &Builder{newCounter(src)} }

// Add records v at t. NaN, infinities and zero times are ignored.
func (b *Builder) Add(t time.Time, v float64) { b.b.add(t, v) }

// Len is the number of readings added.
func (b *Builder) Len() int { return b.b.count() }

// Series returns the series built so far.
func (b *Builder) Series() Series { return b.b.series() }

// AddSnapshot adds a stored profile (heap, goroutine or goroutineleak) to the evidence.
func (ev *Evidence) AddSnapshot(s Snapshot) {
	switch s.Kind {
	case kindGoroutineLeak:
		ev.LeakSnaps = append(ev.LeakSnaps, s)
		ev.LeakProfileServed = true
	case "goroutine":
		ev.GoroutineSnaps = append(ev.GoroutineSnaps, s)
	default:
		ev.Heaps = append(ev.Heaps, s)
	}
}

// Finish completes evidence built with New: the window (from the readings and snapshots
// when not set), the memory budget, and the reasons for what is missing (Gaps).
func (ev *Evidence) Finish(opts Options) {
	first, last := ev.Start, ev.End
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	for _, s := range ev.allSeries() {
		if !s.Empty() {
			see(s.First().T)
			see(s.Last().T)
		}
	}
	for _, snaps := range [][]Snapshot{ev.Heaps, ev.GoroutineSnaps, ev.LeakSnaps} {
		for _, s := range snaps {
			see(s.T)
		}
	}
	if ev.Start.IsZero() {
		ev.Start = first
	}
	if ev.End.IsZero() {
		ev.End = last
	}
	if u := opts.Until; !u.IsZero() && ev.End.After(u) {
		ev.End = u
	}
	if ev.Budget == 0 {
		ev.setBudget(opts.MemoryBudgetBytes, 0, "")
	}
	ev.explainGaps()
}

// allSeries lists every canonical series.
func (ev *Evidence) allSeries() []*Series {
	return []*Series{&ev.RSS, &ev.HWM, &ev.RSSAnon, &ev.RSSFile, &ev.LazyFree, &ev.TreeRSS, &ev.ProcessCPU,
		&ev.CgroupUsage, &ev.Live, &ev.HeapInUse, &ev.HeapAtGC, &ev.HeapGoal, &ev.HeapFree, &ev.RuntimeResident,
		&ev.Stacks, &ev.Goroutines, &ev.Leaked, &ev.GCCycles, &ev.GCForced, &ev.GCCPU, &ev.GCAssist,
		&ev.AvailableCPU, &ev.AllocBytes, &ev.AllocObjects, &ev.NonGo, &ev.NonGoShare, &ev.Retained,
		&ev.RetainedShare, &ev.ReleasedResident, &ev.SchedRun, &ev.SchedWait}
}
