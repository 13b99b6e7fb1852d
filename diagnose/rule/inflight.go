package rule

import (
	"github.com/memdoctor/memdoctor/facts"
)

// Bursts in flight at every GC. When bursts come as often as the GC runs and the GC runs
// inside them (a burst's own allocation starts a cycle), every reading of the live heap holds
// one: the live heap never shows its floor, no spike shows in it, and a heap profile shows
// the burst's site holding memory as if it were kept, a leak's culprit with most of its
// "growth". What the site held at each GC, it had allocated since the GC before: it is a
// transient spike, not a leak, however often the GC sees it.

// inFlightBursts are the sites (facts.InFlight) whose memory at the GCs was bursts in
// flight: at most of the readings after the first (a majority, two at least) the site held
// no more than it had allocated since the reading before, and what it held did not grow as
// kept memory does (facts.Growing). A leak's site that also makes garbage may allocate
// more between two readings than it holds (a handler keeping a little of each request), but
// what it holds rises at every reading and never falls (facts.Growing); a burst's held memory
// is whatever burst the GC ran inside, the same size again and again, or smaller, or larger.
func inFlightBursts(fs *facts.Facts) []*facts.InFlight {
	var out []*facts.InFlight
	for i := range fs.InFlight {
		f := &fs.InFlight[i]
		replaced := 0
		for k := 1; k < len(f.Held); k++ {
			if f.Held[k].V <= f.Since[k] {
				replaced++
			}
		}
		if n := len(f.Held) - 1; replaced >= 2 && 2*replaced > n && !facts.Growing(facts.Values(f.Held)) {
			out = append(out, f)
		}
	}
	return out
}

// inFlightSite reports whether function is the site of a burst in flight.
func inFlightSite(bursts []*facts.InFlight, function string) bool {
	for _, f := range bursts {
		if f.Site.Function == function {
			return true
		}
	}
	return false
}

// withoutInFlight drops from a leak's culprits the sites of bursts in flight.
func withoutInFlight(cs []Culprit, bursts []*facts.InFlight) []Culprit {
	if len(bursts) == 0 {
		return cs
	}
	out := cs[:0:0]
	for _, c := range cs {
		if !inFlightSite(bursts, c.Function) {
			out = append(out, c)
		}
	}
	return out
}

// inFlightSpikes are the spikes a burst in flight made: one at each reading its site was
// replaced at, holding something, rising from the rest of the heap by what the site held
// then.
func inFlightSpikes(f *facts.InFlight) []facts.Spike {
	var out []facts.Spike
	for k := 1; k < len(f.Held); k++ {
		if h := f.Held[k]; h.V > 0 && h.V <= f.Since[k] {
			out = append(out, facts.Spike{Start: h.T, End: h.T, From: f.Held[k-1].T, To: h.T,
				Baseline: f.Rest, PeakLive: f.Rest + h.V, Readings: 1, InFlight: true})
		}
	}
	return out
}

// inFlightCulprit is a burst's site as a spike's culprit: what it allocated over the window,
// its share of all the program allocated.
func inFlightCulprit(f *facts.InFlight) Culprit {
	share := 0.0
	if f.Total > 0 {
		share = f.Allocated / f.Total
	}
	return Culprit{Function: f.Site.Function, File: f.Site.File, Line: f.Site.Line, Bytes: int64(f.Allocated),
		Share: share, Stack: f.Stack, Own: f.Site.Own}
}

// floorSeen reports whether the live heap's spikes rose from its floor, not from a floor
// that held a burst in flight: some came back down, and the highest rose from below the
// rest of the heap plus half of what the burst's site held at the median GC.
func floorSeen(spikes []facts.Spike, f *facts.InFlight) bool {
	var top *facts.Spike
	for i := range spikes {
		if !spikes[i].InProgress && (top == nil || spikes[i].Height() > top.Height()) {
			top = &spikes[i]
		}
	}
	return top != nil && top.Baseline < f.Rest+facts.Median(facts.Values(f.Held))/2
}

// inFlightPair is the pair of heap profiles around the reading at which a burst's site held
// most: what was allocated between them is the burst.
func inFlightPair(f *facts.InFlight) []facts.Snapshot {
	top := 1
	for k := 2; k < len(f.Held); k++ {
		if f.Held[k].V > f.Held[top].V {
			top = k
		}
	}
	return []facts.Snapshot{f.At[top-1], f.At[top]}
}
