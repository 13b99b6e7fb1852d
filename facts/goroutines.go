package facts

import (
	"slices"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// Goroutines is what the goroutine counts and profiles say.
type Goroutines struct {
	// Floor is the count's lows once the process settled.
	Floor []Point
	// Proof is what the goroutineleak profiles proved, nil when they proved nothing.
	Proof *LeakProof
	// Single is the only goroutine profile, when there is exactly one, with its sites
	// (SingleErr when they could not be read).
	Single      *Snapshot
	SingleSites []GoroutineGroup
	SingleErr   error
	// Growth compares the first and the last periodic goroutine profiles, when there are two:
	// the sites whose goroutines grew, most first (GrowthErr when they could not be read).
	GrowthPair bool
	Old, New   Snapshot
	Growth     []GroupDelta
	GrowthErr  error
	// Census is, when Growth names a site, that site's goroutines in each periodic goroutine
	// profile, in order (the first of them before it grew): a census of one stack, not a
	// reading of the whole count, so other goroutines coming and going do not stir it. Nil
	// when a profile's sites could not be read.
	Census []Point
	// Started is, when Growth names a site, the goroutines whose stacks start in that site's
	// start function (the root-most frame of its stack) in each periodic goroutine profile, in
	// order. Goroutines that run (a loop that spins, one busy working) are caught at whatever
	// line they were at when a profile was taken, and so at another site from one profile to
	// the next: only the function that started them stays. Nil as Census is.
	Started []Point
	// Spinning is the share of the goroutines started there that the last periodic goroutine
	// profile caught running or runnable, never parked (0 when none were started there): a
	// loop that never blocks is caught anywhere in it, a worker waiting for work never.
	Spinning float64
	// Last is the last goroutine profile, with its sites (LastErr when they could not be
	// read), when there are several: what they show at the end, when they are too close
	// together for a trend.
	Last      *Snapshot
	LastSites []GoroutineGroup
	LastErr   error
	// Made is the program's code behind goroutines that grew, or were proved leaked, in a
	// library's code with no frame of the program (nil when they are the program's own).
	Made *Made
	// Shutdown is the service's shutdown at the session's end, when it had one: the counts
	// and goroutine profiles above are those before it.
	Shutdown *Shutdown
}

// LeakProof is what the goroutineleak profiles proved: the count of leaked goroutines at
// the first and the last reading, and the last snapshot's sites.
type LeakProof struct {
	First, Leaked float64
	At            Point
	Readings      int
	// Snap is the last goroutineleak snapshot (HasSnap), Sites its sites (SitesErr when they
	// could not be read).
	Snap     Snapshot
	HasSnap  bool
	Sites    []GoroutineGroup
	SitesErr error
}

// GroupDelta is how many more goroutines wait at one site.
type GroupDelta struct {
	Site  GoroutineGroup
	Delta int
}

func goroutinesOf(ev *evidence.Evidence) Goroutines {
	g := Goroutines{Shutdown: shutdownOf(ev)}
	var cut time.Time
	if g.Shutdown != nil {
		cut = g.Shutdown.At
	}
	g.Floor = Floor(settled(ev, before(ev.Goroutines.Points, cut)))
	var snaps []Snapshot
	for _, s := range ev.GoroutineSnaps {
		if cut.IsZero() || !s.T.After(cut) {
			snaps = append(snaps, s)
		}
	}
	if s := &ev.Leaked; !s.Empty() && s.Last().V > 0 {
		p := &LeakProof{First: s.First().V, Leaked: s.Last().V, At: s.Last(), Readings: s.Len()}
		if n := len(ev.LeakSnaps); n > 0 {
			p.Snap, p.HasSnap = ev.LeakSnaps[n-1], true
			p.Sites, p.SitesErr = ev.GoroutineSites(p.Snap)
		}
		g.Proof = p
	}
	if len(snaps) == 1 {
		s := snaps[0]
		g.Single = &s
		g.SingleSites, g.SingleErr = ev.GoroutineSites(s)
	}
	if n := len(snaps); n > 1 {
		s := snaps[n-1]
		g.Last = &s
		g.LastSites, g.LastErr = ev.GoroutineSites(s)
	}
	var refs []Snapshot
	for _, s := range snaps {
		if s.Periodic() {
			refs = append(refs, s)
		}
	}
	if len(refs) >= 2 {
		g.GrowthPair, g.Old, g.New = true, refs[0], refs[len(refs)-1]
		g.Growth, g.GrowthErr = growingGroups(ev, g.Old, g.New)
		if len(g.Growth) > 0 {
			g.Census, g.Started, g.Spinning = census(ev, refs, g.Growth[0].Site)
		}
	}
	// The sites that grew most, or were proved leaked, with a fair share of the first's
	// goroutines: a few more idle connections beside a leak are not its cause.
	var grew []GoroutineGroup
	for _, d := range g.Growth[:min(len(g.Growth), libraryGroups)] {
		if d.Delta*minShareOfTop >= g.Growth[0].Delta {
			grew = append(grew, d.Site)
		}
	}
	if g.Proof != nil && len(g.Proof.Sites) > 0 {
		grew = nil
		for _, s := range g.Proof.Sites[:min(len(g.Proof.Sites), libraryGroups)] {
			if s.Count*minShareOfTop >= g.Proof.Sites[0].Count {
				grew = append(grew, s)
			}
		}
	}
	known := append(append([]GoroutineGroup(nil), g.LastSites...), g.SingleSites...)
	g.Made = madeOf(ev, grew, known, runningAllAlong(ev, g))
	return g
}

// runningAllAlong says whether a function sat on some goroutine's stack in the first and in
// the last periodic goroutine profiles (in the last one, when there is only one): a loop that
// ran all along, such as a server's accept loop.
func runningAllAlong(ev *evidence.Evidence, g Goroutines) func(string) bool {
	var profiles [][]GoroutineGroup
	switch {
	case g.GrowthPair:
		for _, s := range []Snapshot{g.Old, g.New} {
			sites, err := ev.GoroutineSites(s)
			if err != nil {
				return func(string) bool { return false }
			}
			profiles = append(profiles, sites)
		}
	case g.Last != nil:
		profiles = append(profiles, g.LastSites)
	case g.Single != nil:
		profiles = append(profiles, g.SingleSites)
	}
	return func(fn string) bool {
		for _, sites := range profiles {
			if !slices.ContainsFunc(sites, func(s GoroutineGroup) bool { return slices.Contains(s.Stack, fn) }) {
				return false
			}
		}
		return len(profiles) > 0
	}
}

// census counts, in each snapshot in order, the goroutines at top's site (site) and those
// started in top's start function (started, nil when its stack has none), and the share of the
// latter the last snapshot caught running or runnable (spinning). Both are nil when a
// snapshot's sites could not be read.
func census(ev *evidence.Evidence, snaps []Snapshot, top GoroutineGroup) (site, started []Point, spinning float64) {
	fn := top.Start()
	for i, s := range snaps {
		sites, err := ev.GoroutineSites(s)
		if err != nil {
			return nil, nil, 0
		}
		atSite, inFn, running := 0, 0, 0
		for _, g := range sites {
			if g.SiteKey == top.SiteKey {
				atSite += g.Count
			}
			if fn == "" || g.Start() != fn {
				continue
			}
			inFn += g.Count
			if g.Runs() {
				running += g.Count
			}
		}
		site = append(site, Point{T: s.T, V: float64(atSite)})
		if fn != "" {
			started = append(started, Point{T: s.T, V: float64(inFn)})
		}
		if i == len(snaps)-1 && inFn > 0 {
			spinning = float64(running) / float64(inFn)
		}
	}
	return site, started, spinning
}

// growingGroups returns the goroutine sites that grew between two snapshots, most first.
func growingGroups(ev *evidence.Evidence, old, new Snapshot) ([]GroupDelta, error) {
	og, err := ev.GoroutineSites(old)
	if err != nil {
		return nil, err
	}
	ng, err := ev.GoroutineSites(new)
	if err != nil {
		return nil, err
	}
	before := make(map[string]int, len(og))
	for _, g := range og {
		before[g.SiteKey] = g.Count
	}
	var out []GroupDelta
	for _, g := range ng {
		if d := g.Count - before[g.SiteKey]; d > 0 {
			out = append(out, GroupDelta{g, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Delta > out[j].Delta })
	return out, nil
}

// Running reports whether a goroutine's stack shows it running or runnable, never parked: a
// goroutine that spins (evidence.Running).
func Running(stack []string) bool { return evidence.Running(stack) }
