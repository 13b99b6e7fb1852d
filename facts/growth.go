package facts

import (
	"github.com/memdoctor/memdoctor/evidence"
)

// HeapGrowth is what grew between the first and the last settled periodic heap profiles,
// site by site, and how many times over each growing site allocated what it held at the
// last: the allocation (alloc_space) between them over its in-use memory (inuse_space).
type HeapGrowth struct {
	Refs  []Snapshot // the settled periodic heap profiles
	InUse *SiteDiff
	// Turnover is, for each site whose in-use memory grew, what it allocated between the two
	// profiles over what it held at the last; nil without alloc_space.
	Turnover map[string]float64
	// Sites follows the sites that grew most (siteLeakCands of them) across at most
	// siteLeakSnaps of the profiles, each reading repeated from the one before dropped;
	// Totals are those profiles' in-use totals.
	Sites  []SiteSeries
	Totals []Point
	// Shared is the function the growing sites share, followed across the same profiles
	// (nil when no function is over two of them).
	Shared *Shared
}

// SiteSeries is one allocation site's in-use memory across heap profiles.
type SiteSeries struct {
	Delta  SiteDelta // the site, and how much it grew between the profiles compared
	Points []Point
}

// How many sites, across how many profiles, HeapGrowth and LeakSites follow.
const (
	siteLeakCands = 5
	siteLeakSnaps = 16
	leakSiteCands = 10
	leakSiteSnaps = 8
)

// heapGrowthOf compares the first and the last settled periodic heap profiles; nil without
// two of them to compare.
func heapGrowthOf(ev *evidence.Evidence) *HeapGrowth {
	refs := settledSnaps(ev, ev.PeriodicHeaps())
	if len(refs) < 2 {
		return nil
	}
	old, new := refs[0], refs[len(refs)-1]
	inuse, err := ev.HeapDiff(old, new, "inuse_space")
	if err != nil {
		return nil
	}
	hg := &HeapGrowth{Refs: refs, InUse: inuse}
	alloc, err := ev.HeapDiff(old, new, "alloc_space")
	if err == nil {
		allocated := make(map[string]int64, len(alloc.ByFunction))
		for _, d := range alloc.ByFunction {
			allocated[d.Site.Function] = d.Delta
		}
		hg.Turnover = make(map[string]float64)
		for _, d := range inuse.ByFunction {
			if d.Delta > 0 {
				hg.Turnover[d.Site.Function] = float64(allocated[d.Site.Function]) / float64(max(d.New, 1))
			}
		}
	}
	cands := topGrowing(inuse, siteLeakCands)
	hg.Shared = sharedIn(inuse)
	series, totals := siteSeries(ev, refs, cands, hg.Shared, siteLeakSnaps)
	hg.Totals = totals
	for _, d := range cands {
		hg.Sites = append(hg.Sites, SiteSeries{Delta: d, Points: Observed(series[d.Site.Function])})
	}
	if sh := hg.Shared; sh != nil {
		if alloc != nil && len(sh.Points) > 0 {
			sh.Turnover = float64(callerDelta(alloc.ByCaller, sh.Caller.Function)) / max(sh.Points[len(sh.Points)-1].V, 1)
		}
		sh.Points = Observed(sh.Points)
	}
	return hg
}

// LeakSites is what grew between the first and the last periodic heap profiles (start-up
// included: the culprits of a leak are named from all of it), with the sites that grew most
// followed across at most leakSiteSnaps of the settled profiles.
type LeakSites struct {
	// Pair is true when there were two periodic heap profiles to compare.
	Pair     bool
	Old, New Snapshot
	Diff     *SiteDiff
	Err      error // comparing them failed
	Sites    []SiteSeries
	// Totals are the in-use totals of the profiles the sites were followed across; Shared
	// the function the growing sites share, followed across them (nil when none is over two).
	Totals []Point
	Shared *Shared
}

func leakSitesOf(ev *evidence.Evidence) LeakSites {
	refs := ev.PeriodicHeaps()
	if len(refs) < 2 {
		return LeakSites{}
	}
	ls := LeakSites{Pair: true, Old: refs[0], New: refs[len(refs)-1]}
	ls.Diff, ls.Err = ev.HeapDiff(ls.Old, ls.New, "inuse_space")
	if ls.Err != nil {
		return ls
	}
	cands := topGrowing(ls.Diff, leakSiteCands)
	ls.Shared = sharedIn(ls.Diff)
	series, totals := siteSeries(ev, settledSnaps(ev, refs), cands, ls.Shared, leakSiteSnaps) // a start-up's loading is not growth
	ls.Totals = totals
	for _, d := range cands {
		ls.Sites = append(ls.Sites, SiteSeries{Delta: d, Points: series[d.Site.Function]})
	}
	return ls
}

// topGrowing is the n sites whose value grew most, the observer's left out (Observer: what
// memdoctor's own reads make the program allocate is never a leak of the program's), and the
// goroutines' own structures (GoroutineOwn: their growth is the goroutine count's).
func topGrowing(diff *SiteDiff, n int) []SiteDelta {
	var cands []SiteDelta
	for _, d := range diff.ByFunction {
		if d.Delta <= 0 || len(cands) == n {
			break
		}
		if !observerSite(d) && !goroutineOwnSite(d) {
			cands = append(cands, d)
		}
	}
	return cands
}

// siteSeries reads each candidate site's inuse_space across at most maxSnaps snapshots
// spread over refs, and the heap profiles' totals; and the shared caller's into its Points,
// when there is one.
func siteSeries(ev *evidence.Evidence, refs []Snapshot, cands []SiteDelta, shared *Shared, maxSnaps int) (map[string][]Point, []Point) {
	series := make(map[string][]Point, len(cands))
	var totals []Point
	for _, ref := range spread(refs, maxSnaps) {
		tab, err := ev.HeapSites(ref, "inuse_space")
		if err != nil {
			continue // named in the notes
		}
		totals = append(totals, Point{T: ref.T, V: float64(tab.Total)})
		byFn := make(map[string]int64, len(tab.ByFunction))
		for _, e := range tab.ByFunction {
			byFn[e.Site.Function] = e.Value
		}
		for _, c := range cands {
			series[c.Site.Function] = append(series[c.Site.Function], Point{T: ref.T, V: float64(byFn[c.Site.Function])})
		}
		if shared != nil {
			shared.Points = append(shared.Points, Point{T: ref.T, V: float64(callerValue(tab, shared.Caller.Function))})
		}
	}
	return series, totals
}
