package diagnose

import (
	"github.com/memdoctor/memdoctor/facts"
)

// inFlightTurnover: a site that allocated this many times what it holds over the window
// replaces its memory again and again; what it holds when a GC runs is what was in flight
// then (request bodies, buffers), not what it keeps. A leaking site keeps most of what it
// allocates (a growing slice's copies make it allocate two or three times what it holds).
const inFlightTurnover = 20

// inFlightMajority: a growth mostly (this share of it) made by such sites is in flight.
const inFlightMajority = 2.0 / 3

// inFlight reports a site whose in-use memory is in flight (inFlightTurnover).
func inFlight(hg *facts.HeapGrowth, site string) bool { return hg.Turnover[site] >= inFlightTurnover }

// inFlightShare is the share of the in-use growth that sites in flight made, and the highest
// turnover among them. Heap profiles read the live heap at one GC each: when the GC runs
// hundreds of times between them, each profile is a draw of whatever was in flight at one
// GC, and a few draws that happen to rise are not a leak.
func inFlightShare(hg *facts.HeapGrowth) (share, turnover float64) {
	if hg.InUse.Growth <= 0 {
		return 0, 0
	}
	var held int64
	for _, d := range hg.InUse.ByFunction {
		if d.Delta > 0 && inFlight(hg, d.Site.Function) {
			held += d.Delta
			turnover = max(turnover, hg.Turnover[d.Site.Function])
		}
	}
	return float64(held) / float64(hg.InUse.Growth), turnover
}
