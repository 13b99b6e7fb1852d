package sim

import (
	"maps"
	"math"
	"slices"
)

// Observed are figures of the simulated window, measured inside the model (not through the
// session), for checking the generator and reading the results.
type Observed struct {
	GCCycles                       int     // cycles that ran in the window
	GCShare                        float64 // GC CPU (idle marking excluded) over the process's CPU in the window
	LiveStart                      float64 // true live heap at the window's start and end, bytes
	LiveEnd                        float64
	SpikeTop                       float64 // the largest spike part inside the window, bytes
	RetainedMed                    float64 // median of free + LazyFree over the window, bytes
	LiveMed                        float64 // median of the live heap over the window
	GoalMed                        float64 // median of the heap goal over the window
	GoroutinesStart, GoroutinesEnd int
	RSSPeak                        float64
	AllocRate                      float64 // bytes/s allocated over the window
	allocStart                     float64
}

func (g *generator) windowStart() {
	g.started = true
	m := g.m
	g.observed.GCCycles = -m.cycles
	g.observed.LiveStart = m.cur.sum()
	g.observed.GoroutinesStart = m.goroutines()
	g.observed.allocStart = m.allocBytes
	g.gcCPU0 = m.gcTotal - m.gcIdle
	g.user0 = m.user
}

// tick measures the window's figures at one instant.
func (g *generator) tick(t float64) {
	if t < g.ws || t > g.we {
		return
	}
	m := g.m
	g.observed.SpikeTop = math.Max(g.observed.SpikeTop, m.cur.spike)
	g.observed.RSSPeak = math.Max(g.observed.RSSPeak, m.rss())
	g.retained = append(g.retained, m.free+m.lazy)
	g.live = append(g.live, m.cur.sum())
	g.goals = append(g.goals, m.goal)
}

func (g *generator) windowEnd() {
	m := g.m
	o := &g.observed
	o.GCCycles += m.cycles
	o.LiveEnd = m.cur.sum()
	gc := m.gcTotal - m.gcIdle - g.gcCPU0
	o.GCShare = gc / math.Max(gc+m.user-g.user0, 1e-9)
	o.RetainedMed = median(g.retained)
	o.LiveMed = median(g.live)
	o.GoalMed = median(g.goals)
	o.GoroutinesEnd = m.goroutines()
	window := g.p.Window
	if g.spec.Vantage == Burst {
		window = g.we - g.ws
	}
	o.AllocRate = (m.allocBytes - o.allocStart) / window
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Thresholds of the truth: the generator's judgment of what is a problem.
const (
	gcShareProblem = 0.25 // GC CPU share from which gc-overhead must be reported
	gcShareFine    = 0.05 // below it, gc-overhead must not be
)

// truth says what a diagnosis must find in the session just written.
func (g *generator) truth() Truth {
	p, o, s := g.p, g.observed, g.sites
	required := map[string]string{} // kind -> culprit ("" = none)
	lines := map[string]int64{}     // kind -> the culprit's line (when known)
	dontCare := map[string]bool{}
	band := ""
	switch g.spec.Shape {
	case HeapLeak, BusyLeak, RareGCLeak, LeakUnderSpikes, GoroutineLeak, LibraryGoroutineLeak, NonGo, Retention,
		SpreadLeak, LeakUnderExports, SteadyHeapLeak, SteadyGoroutineLeak, SpinGoroutineLeak, GoroutineFlood:
		// Resident memory grows with what grows: memory-growth may name it too (the
		// consistency pass drops it when another finding explains the part that grew).
		dontCare[KindMemoryGrowth] = true
	case Warmup:
		// A warm-up that several times multiplies the memory the process needs is said, as
		// a step that has not come back (RSS about twice the live heap's rise).
		if o.LiveEnd >= 2*o.LiveStart && o.LiveEnd-o.LiveStart >= 128*mib {
			dontCare[KindMemoryGrowth] = true
		}
	}
	switch g.spec.Shape {
	case HeapLeak, BusyLeak, RareGCLeak, SteadyHeapLeak:
		required[KindHeapLeak] = culpritOf(s.leak.stack)
		band = rateBand(p.LeakRate*60/mib, 3, 10)
		if p.LeakBusy > 0 || g.spec.Shape == SteadyHeapLeak {
			// The leaking site makes most of the allocation too; a steady leak's service makes
			// garbage enough for a GC every few seconds, whose top site may cost that much.
			dontCare[KindAllocationHotspot] = true
		}
	case SpreadLeak:
		// No site keeps a majority of it: the function they share is the culprit.
		required[KindHeapLeak] = spreadShared
		band = rateBand(p.LeakRate*60/mib, 10, 30)
	case Spikes, LeakUnderSpikes, LeakUnderExports, BurstsInGC:
		if o.SpikeTop >= 0.5*p.SpikeHeight {
			required[KindTransientSpike] = culpritOf(s.spike.stack)
		} else {
			dontCare[KindTransientSpike] = true
		}
		if s.leak != nil {
			required[KindHeapLeak] = culpritOf(s.leak.stack)
			band = rateBand(p.LeakRate*60/mib, 10, 40)
		}
		dontCare[KindAllocationHotspot] = true
		dontCare[KindRuntimeRetention] = true
	case GoroutineLeak, LibraryGoroutineLeak, SteadyGoroutineLeak, SpinGoroutineLeak, GoroutineFlood:
		required[KindGoroutineLeak] = s.leakFn
		if g.spec.Shape == GoroutineFlood {
			dontCare[KindTransientSpike] = true // the observer's requests: a spike, with no culprit
			// On a few hundred thousand goroutines the leak adds less than the 30% a rise must
			// add to matter (docs/verdicts.md) in most windows: required only once it has.
			if float64(o.GoroutinesEnd-o.GoroutinesStart) < 0.3*float64(o.GoroutinesStart) {
				delete(required, KindGoroutineLeak)
				dontCare[KindGoroutineLeak] = true
			}
		}
		if s.lib != nil {
			fn, line := culpritLine(s.lib.maker)
			required[KindGoroutineLeak] = fn
			lines[KindGoroutineLeak] = line
		}
		dontCare[KindHeapLeak] = true // what the goroutines keep grows the heap
		band = rateBand(p.GoroutineLeakRate, 5, 20)
	case GCPressure:
		dontCare[KindAllocationHotspot] = true
	case CostClimb:
		required[KindCostGrowth] = culpritOf(s.climb.stack)
		dontCare[KindAllocationHotspot] = true // the climbing site may come to dominate allocation
		dontCare[KindMemoryGrowth] = true      // the heap in use grows with the allocation
	case Retention:
		if o.RetainedMed >= math.Max(64*mib, o.LiveMed) {
			required[KindRuntimeRetention] = ""
		} else {
			dontCare[KindRuntimeRetention] = true
		}
		dontCare[KindTransientSpike] = true
		dontCare[KindAllocationHotspot] = true
	case NonGo:
		required[KindNonGoMemory] = ""
	}
	switch {
	case o.GCShare >= gcShareProblem:
		required[KindGCOverhead] = ""
	case o.GCShare >= gcShareFine:
		dontCare[KindGCOverhead] = true
	}
	// Free memory beyond the whole heap goal is more than the pacer's headroom: a reader may
	// call it retention whatever the shape.
	if _, ok := required[KindRuntimeRetention]; !ok && o.RetainedMed >= math.Max(64*mib, o.GoalMed) {
		dontCare[KindRuntimeRetention] = true
	}
	t := Truth{Culprits: map[string]string{}, Lines: map[string]int64{}, Band: band, Params: p, Observed: o}
	for _, k := range slices.Sorted(maps.Keys(required)) {
		if (g.spec.Vantage == Profiles || g.spec.Vantage == Burst) && (k == KindGCOverhead || k == KindRuntimeRetention || k == KindNonGoMemory) {
			t.Unobservable = append(t.Unobservable, k) // no samples: nothing shows them
			continue
		}
		if g.spec.Vantage == Burst {
			// Seconds of profiles show no spike's rise and fall, and a growth only when it
			// grew, within them, by what matters: then it is suspected, naming its site.
			if k == KindTransientSpike || !g.burstShows(k) {
				t.Unobservable = append(t.Unobservable, k)
				continue
			}
			t.Suspect = append(t.Suspect, k)
		}
		t.Kinds = append(t.Kinds, k)
		if c := required[k]; c != "" {
			t.Culprits[k] = c
			if l := lines[k]; l > 0 {
				t.Lines[k] = l
			}
		}
	}
	for _, k := range Kinds {
		if _, req := required[k]; !req && !dontCare[k] {
			t.Absent = append(t.Absent, k)
		}
	}
	return t
}

func rateBand(v, slow, fast float64) string { return band(v, slow, fast) }

// What a growth must add within a burst of profiles to show, as docs/verdicts.md states the
// effect that matters: the heap 4 MiB and 10%, goroutines 30 (an exact count).
const (
	burstHeapAbs, burstHeapRel = 4 * mib, 0.10
	burstGoroutineAbs          = 30
)

// burstShows reports whether a growth kind grew, within the burst of profiles, by what
// matters.
func (g *generator) burstShows(k string) bool {
	span := g.we - g.ws
	switch k {
	case KindHeapLeak:
		grew := g.p.LeakRate * span
		return grew >= math.Max(burstHeapAbs, burstHeapRel*g.observed.LiveStart)
	case KindGoroutineLeak:
		grew := g.p.GoroutineLeakRate * span
		return grew >= burstGoroutineAbs
	}
	return false
}

// growthPerMinute is how fast the kind's quantity grows in truth, in the unit of its
// detection limit (bytes per minute for heap-leak); 0 when the kind is not a growth.
func (t Truth) growthPerMinute(kind string) float64 {
	if kind == KindHeapLeak {
		return t.Params.LeakRate * 60
	}
	return 0
}
