package facts

import (
	"sort"

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
	g := Goroutines{Floor: Floor(settled(ev, ev.Goroutines.Points))}
	if s := &ev.Leaked; !s.Empty() && s.Last().V > 0 {
		p := &LeakProof{First: s.First().V, Leaked: s.Last().V, At: s.Last(), Readings: s.Len()}
		if n := len(ev.LeakSnaps); n > 0 {
			p.Snap, p.HasSnap = ev.LeakSnaps[n-1], true
			p.Sites, p.SitesErr = ev.GoroutineSites(p.Snap)
		}
		g.Proof = p
	}
	if len(ev.GoroutineSnaps) == 1 {
		s := ev.GoroutineSnaps[0]
		g.Single = &s
		g.SingleSites, g.SingleErr = ev.GoroutineSites(s)
	}
	var refs []Snapshot
	for _, s := range ev.GoroutineSnaps {
		if s.Periodic() {
			refs = append(refs, s)
		}
	}
	if len(refs) >= 2 {
		g.GrowthPair, g.Old, g.New = true, refs[0], refs[len(refs)-1]
		g.Growth, g.GrowthErr = growingGroups(ev, g.Old, g.New)
	}
	return g
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
