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

// turnovers is, for each site whose in-use memory grew between two heap profiles, how many
// times over it allocated what it held at the second: the allocation (alloc_space) between
// them over its in-use memory (inuse_space) at the second.
func turnovers(ev *evidence.Evidence, old, new evidence.Snapshot, inuse *evidence.SiteDiff) (map[string]float64, error) {
	alloc, err := ev.HeapDiff(old, new, "alloc_space")
	if err != nil {
		return nil, err
	}
	allocated := make(map[string]int64, len(alloc.ByFunction))
	for _, d := range alloc.ByFunction {
		allocated[d.Site.Function] = d.Delta
	}
	out := make(map[string]float64)
	for _, d := range inuse.ByFunction {
		if d.Delta > 0 {
			out[d.Site.Function] = float64(allocated[d.Site.Function]) / float64(max(d.New, 1))
		}
	}
	return out, nil
}

// inFlightShare is the share of the in-use growth between the first and the last settled
// periodic heap profiles that sites with a high turnover made, and the highest turnover
// among them. Heap profiles read the live heap at one GC each: when the GC runs hundreds of
// times between them, each profile is a draw of whatever was in flight at one GC, and a few
// draws that happen to rise are not a leak. ok is false without two profiles to compare.
func inFlightShare(ev *evidence.Evidence) (share, turnover float64, ok bool) {
	refs := settledSnaps(ev, ev.PeriodicHeaps())
	if len(refs) < 2 {
		return 0, 0, false
	}
	old, new := refs[0], refs[len(refs)-1]
	inuse, err := ev.HeapDiff(old, new, "inuse_space")
	if err != nil || inuse.Growth <= 0 {
		return 0, 0, false
	}
	tv, err := turnovers(ev, old, new, inuse)
	if err != nil {
		return 0, 0, false
	}
	var inFlight int64
	for _, d := range inuse.ByFunction {
		if t := tv[d.Site.Function]; d.Delta > 0 && t >= inFlightTurnover {
			inFlight += d.Delta
			turnover = max(turnover, t)
		}
	}
	return float64(inFlight) / float64(inuse.Growth), turnover, true
}
