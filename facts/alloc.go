package facts

import (
	"cmp"

	"github.com/memdoctor/memdoctor/evidence"
)

// Alloc is what the program allocated between its first and last periodic heap profiles,
// by site, and the known patterns its heaviest sites allocate through.
type Alloc struct {
	// Pair is true when there were two periodic heap profiles to compare.
	Pair     bool
	Old, New Snapshot
	Space    *SiteDiff // alloc_space
	SpaceErr error
	Objects  *SiteDiff // alloc_objects; nil when it could not be read
	// Patterns are, for the sites that allocated most, the known patterns their stacks in
	// New go through, heaviest first.
	Patterns map[string][]Pattern
}

// allocPatternSites is how many of the heaviest sites are matched against the patterns.
const allocPatternSites = 10

func allocOf(ev *evidence.Evidence) Alloc {
	refs := ev.PeriodicHeaps()
	if len(refs) < 2 {
		return Alloc{}
	}
	a := Alloc{Pair: true, Old: refs[0], New: refs[len(refs)-1]}
	if a.Space, a.SpaceErr = ev.HeapDiff(a.Old, a.New, "alloc_space"); a.SpaceErr != nil {
		return a
	}
	a.Patterns = sitePatterns(ev, a.New, topFunctions(a.Space.ByFunction, allocPatternSites))
	if objects, err := ev.HeapDiff(a.Old, a.New, "alloc_objects"); err == nil {
		a.Objects = objects
	}
	return a
}

// topFunctions names the first n sites of a diff that grew.
func topFunctions(rows []SiteDelta, n int) []string {
	var out []string
	for _, d := range rows {
		if d.Delta <= 0 || len(out) == n {
			break
		}
		out = append(out, d.Site.Function)
	}
	return out
}

// Cost compares what the program allocated between its first two periodic heap profiles
// and between its last two, when it has four or more.
type Cost struct {
	Pair                bool // both diffs were read
	First, Last         Snapshot
	Early, Late         *SiteDiff
	EarlySecs, LateSecs float64
}

func costOf(ev *evidence.Evidence) Cost {
	refs := ev.PeriodicHeaps()
	if len(refs) < 4 {
		return Cost{}
	}
	early, err := ev.HeapDiff(refs[0], refs[1], "alloc_space")
	if err != nil {
		return Cost{}
	}
	late, err := ev.HeapDiff(refs[len(refs)-2], refs[len(refs)-1], "alloc_space")
	if err != nil {
		return Cost{}
	}
	return Cost{
		Pair: true, First: refs[0], Last: refs[len(refs)-1], Early: early, Late: late,
		EarlySecs: refs[1].T.Sub(refs[0].T).Seconds(),
		LateSecs:  refs[len(refs)-1].T.Sub(refs[len(refs)-2].T).Seconds(),
	}
}

// HeapSnapshot is what the only heap profile holds, when there is exactly one.
type HeapSnapshot struct {
	Snap Snapshot
	// Window is what a delta profile (?seconds=N) covers (0 for a cumulative one).
	Window float64
	// Held is inuse_space, else inuse_objects; Allocated alloc_space, else alloc_objects;
	// each nil when neither could be read, and Err the first error then.
	Held, Allocated *SiteTable
	Err             error
	// AllocSpace is alloc_space alone (AllocSpaceErr when it could not be read), and Patterns
	// the known patterns of its heaviest sites.
	AllocSpace    *SiteTable
	AllocSpaceErr error
	Patterns      map[string][]Pattern
}

func heapSnapshotOf(ev *evidence.Evidence) *HeapSnapshot {
	if len(ev.Heaps) != 1 {
		return nil
	}
	return heapSnapshotAt(ev, ev.Heaps[0])
}

// heapSnapshotAt reads one heap profile as the snapshot views read it.
func heapSnapshotAt(ev *evidence.Evidence, s evidence.Snapshot) *HeapSnapshot {
	h := &HeapSnapshot{Snap: s}
	h.AllocSpace, h.AllocSpaceErr = ev.HeapSites(s, "alloc_space")
	if h.AllocSpaceErr == nil {
		var fns []string
		for _, e := range h.AllocSpace.ByFunction {
			if e.Value <= 0 || len(fns) == allocPatternSites {
				break
			}
			fns = append(fns, e.Site.Function)
		}
		h.Patterns = sitePatterns(ev, s, fns)
	}
	if info, err := ev.ReadProfileInfo(s.Path); err == nil && info.Window > 0 {
		h.Window = info.Window.Seconds()
	}
	read := func(types ...string) *SiteTable {
		for _, typ := range types {
			tab, err := ev.HeapSites(s, typ)
			if err == nil {
				return tab
			}
			h.Err = cmp.Or(h.Err, err)
		}
		return nil
	}
	h.Held = read("inuse_space", "inuse_objects")
	h.Allocated = read("alloc_space", "alloc_objects")
	if h.Held != nil || h.Allocated != nil {
		h.Err = nil
	}
	return h
}
