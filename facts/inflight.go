package facts

import (
	"cmp"
	"slices"

	"github.com/memdoctor/memdoctor/evidence"
)

// InFlight is a site of the program's own code that holds a spike's height of memory at the
// GCs the heap profiles saw (spikeMinHeight, and spikeMinRatio of the rest of the heap),
// followed across them with what it allocated between them. When bursts come as often as
// the GC runs, and the GC runs inside them (a burst's own allocation starts a cycle), every
// reading of the live heap holds a burst in flight: the live heap never shows its floor, and
// no spike shows in it. What each burst held at a GC it allocated since the GC before; a
// leak's memory it allocated long before.
type InFlight struct {
	Site  Site
	Stack []string
	// Held is what the site held at each distinct reading (a GC between each and the one
	// before), Since what it allocated since the reading before (Since[0] is 0); At are the
	// heap profiles of those readings.
	Held  []Point
	Since []float64
	At    []Snapshot
	// Rest is the median of the rest of the heap in use at those readings: the floor the
	// bursts stand on.
	Rest float64
	// Allocated is what the site allocated from the first reading to the last, and Total what
	// the program did.
	Allocated, Total float64
}

// inFlightCands is how many of the sites holding most at the GCs are followed.
const inFlightCands = 3

// inFlightOf follows, across at most siteLeakSnaps of the settled periodic heap profiles,
// the sites of the program's own code holding a spike's height of memory at the median
// reading whose memory did not grow as kept memory does (Growing: a growth is no burst; nil
// when none, or when fewer than three readings differ).
func inFlightOf(ev *evidence.Evidence, refs []Snapshot) []InFlight {
	var tabs []*SiteTable
	var at []Snapshot
	for _, ref := range spread(refs, siteLeakSnaps) {
		tab, err := ev.HeapSites(ref, "inuse_space")
		if err != nil {
			continue // named in the notes
		}
		if n := len(tabs); n > 0 && tab.Total == tabs[n-1].Total {
			continue // no GC in between: the same reading again
		}
		tabs, at = append(tabs, tab), append(at, ref)
	}
	n := len(tabs)
	if n < 3 {
		return nil
	}
	held := map[string][]float64{}
	sites := map[string]evidence.SiteEntry{}
	for i, tab := range tabs {
		for _, e := range tab.ByFunction {
			if !e.Site.Own || e.Value < spikeMinHeight && held[e.Site.Function] == nil {
				continue
			}
			h := held[e.Site.Function]
			if h == nil {
				h = make([]float64, n)
				held[e.Site.Function], sites[e.Site.Function] = h, e
			}
			h[i] = float64(e.Value)
		}
	}
	var out []InFlight
	for fn, h := range held {
		var rest []float64
		for i, tab := range tabs {
			rest = append(rest, float64(tab.Total)-h[i])
		}
		med, floor := Median(h), Median(rest)
		if med < spikeMinHeight || med < spikeMinRatio*floor || Growing(h) {
			continue // too small, or growing
		}
		f := InFlight{Site: sites[fn].Site, Stack: sites[fn].Stack, Rest: floor, Since: make([]float64, n), At: at}
		for i, ref := range at {
			f.Held = append(f.Held, Point{T: ref.T, V: h[i]})
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b InFlight) int {
		return cmp.Or(cmp.Compare(Median(Values(b.Held)), Median(Values(a.Held))), cmp.Compare(a.Site.Function, b.Site.Function))
	})
	out = out[:min(len(out), inFlightCands)]
	// What each allocated between the readings (alloc_space is cumulative).
	prev := make([]float64, len(out))
	var first, last float64
	for i, ref := range at {
		tab, err := ev.HeapSites(ref, "alloc_space")
		if err != nil {
			return nil
		}
		if i == 0 {
			first = float64(tab.Total)
		}
		last = float64(tab.Total)
		for k := range out {
			var v float64
			for _, e := range tab.ByFunction {
				if e.Site.Function == out[k].Site.Function {
					v = float64(e.Value)
					break
				}
			}
			if i > 0 {
				out[k].Since[i] = v - prev[k]
				out[k].Allocated += v - prev[k]
			}
			prev[k] = v
		}
	}
	for k := range out {
		out[k].Total = last - first
	}
	return out
}

// Growing reports whether what a site held at successive GCs grows as kept memory does: it
// held more than at the reading before at most readings, and never let go of much (a fifth of
// what it held, and 4 MiB at least): what a leak holds stays, while a burst caught at one GC
// half-way and at the next near its end rises and falls.
func Growing(h []float64) bool {
	if 2*rises(h) <= len(h)-1 {
		return false
	}
	for k := 1; k < len(h); k++ {
		if fell := h[k-1] - h[k]; fell >= 0.2*h[k-1] && fell >= letGoMin {
			return false
		}
	}
	return true
}

// letGoMin is the least a site must let go of between two GCs for its memory not to be kept.
const letGoMin = 4 << 20

// rises counts the readings higher than the one before.
func rises(vs []float64) int {
	n := 0
	for i := 1; i < len(vs); i++ {
		if vs[i] > vs[i-1] {
			n++
		}
	}
	return n
}
