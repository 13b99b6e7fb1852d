package diagnose

import (
	"github.com/memdoctor/memdoctor/evidence"
)

// inFlightTurnover: a site that allocated this many times what it holds over the window
// replaces its memory again and again; what it holds when a GC runs is what was in flight
// then (request bodies, buffers), not what it keeps. A leaking site keeps most of what it
// allocates (a growing slice's copies make it allocate two or three times what it holds).
const inFlightTurnover = 20

// inFlightMajority: a growth mostly (this share of it) made by such sites is in flight.
const inFlightMajority = 2.0 / 3

// heapGrowth is what grew between the first and the last settled periodic heap profiles,
// site by site, and how many times over each growing site allocated what it held at the
// last: the allocation (alloc_space) between them over its in-use memory (inuse_space).
type heapGrowth struct {
	refs     []evidence.Snapshot // the settled periodic heap profiles
	inuse    *evidence.SiteDiff
	turnover map[string]float64 // nil without alloc_space: no site is in flight
}

// heapGrowth compares the first and the last settled periodic heap profiles once for every
// rule that asks; nil without two of them to compare.
func (in *input) heapGrowth() *heapGrowth {
	if in.profGrowthRead {
		return in.profGrowth
	}
	in.profGrowthRead = true
	refs := settledSnaps(in.ev, in.ev.PeriodicHeaps())
	if len(refs) < 2 {
		return nil
	}
	old, new := refs[0], refs[len(refs)-1]
	inuse, err := in.ev.HeapDiff(old, new, "inuse_space")
	if err != nil {
		return nil
	}
	hg := &heapGrowth{refs: refs, inuse: inuse}
	if alloc, err := in.ev.HeapDiff(old, new, "alloc_space"); err == nil {
		allocated := make(map[string]int64, len(alloc.ByFunction))
		for _, d := range alloc.ByFunction {
			allocated[d.Site.Function] = d.Delta
		}
		hg.turnover = make(map[string]float64)
		for _, d := range inuse.ByFunction {
			if d.Delta > 0 {
				hg.turnover[d.Site.Function] = float64(allocated[d.Site.Function]) / float64(max(d.New, 1))
			}
		}
	}
	in.profGrowth = hg
	return hg
}

// inFlight reports a site whose in-use memory is in flight (inFlightTurnover).
func (hg *heapGrowth) inFlight(site string) bool { return hg.turnover[site] >= inFlightTurnover }

// inFlightShare is the share of the in-use growth that sites in flight made, and the highest
// turnover among them. Heap profiles read the live heap at one GC each: when the GC runs
// hundreds of times between them, each profile is a draw of whatever was in flight at one
// GC, and a few draws that happen to rise are not a leak.
func (hg *heapGrowth) inFlightShare() (share, turnover float64) {
	if hg.inuse.Growth <= 0 {
		return 0, 0
	}
	var inFlight int64
	for _, d := range hg.inuse.ByFunction {
		if d.Delta > 0 && hg.inFlight(d.Site.Function) {
			inFlight += d.Delta
			turnover = max(turnover, hg.turnover[d.Site.Function])
		}
	}
	return float64(inFlight) / float64(hg.inuse.Growth), turnover
}
