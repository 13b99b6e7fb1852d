package evidence

import (
	"slices"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/gctrace"
)

// New returns an empty Evidence for a source other than a session (a folder of profiles, a
// Prometheus range): fill its series with Builders, its snapshots with AddSnapshot and its
// GC cycles with AddGCCycle, then call Finish.
func New(mode string, target Target, opts Options) *Evidence {
	ev := &Evidence{Mode: mode, Target: target, profiles: newStore(opts.MaxProfileBytes, target.MainModule)}
	ev.build = newSessionBuild(ev, opts)
	return ev
}

// SetMainModule sets the target's main module, the one profiles are attributed to, before
// any profile is read by site.
func (ev *Evidence) SetMainModule(mod string) {
	ev.Target.MainModule = mod
	ev.profiles.mu.Lock()
	ev.profiles.opts.MainModule = mod
	clear(ev.profiles.tables)
	clear(ev.profiles.groups)
	ev.profiles.mu.Unlock()
}

// AddGCCycle adds one GODEBUG=gctrace=1 cycle, written at t, as a session's gctrace.log
// cycles are: the live heap, the heap at the GC and its goal, and the counters of cycles,
// forced cycles, GC CPU and mark assists. Cycles come in time order.
func (ev *Evidence) AddGCCycle(t time.Time, c gctrace.Cycle) {
	ev.GCLines++
	if b := ev.build; b != nil && !t.IsZero() && b.in(t) {
		if b.sessionStart.IsZero() {
			b.sessionStart = ev.Target.Started // the counters are zero when the program starts
		}
		b.gcCycle(t, c)
	}
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

// AddProfile adds a snapshot whose profile is in hand, parsed, rather than in a file (s.Path
// only names it): it is held for the evidence's life, outside the bound on the profiles kept
// parsed, and read as a file's would be.
func (ev *Evidence) AddProfile(s Snapshot, p *profile.Profile) {
	ev.profiles.hold(s.Path, p)
	ev.AddSnapshot(s)
}

// Finish completes evidence built with New: the series of GC cycles and what the profiles
// show (each quantity from its source with the most readings, as for a session), the
// window (from the readings and snapshots when not set), the memory budget, and the
// reasons for what is missing (Gaps).
func (ev *Evidence) Finish(opts Options) {
	for _, snaps := range []*[]Snapshot{&ev.Heaps, &ev.GoroutineSnaps, &ev.LeakSnaps} {
		slices.SortStableFunc(*snaps, func(a, b Snapshot) int { return a.T.Compare(b.T) })
	}
	if b := ev.build; b != nil {
		b.finishNew()
	}
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
