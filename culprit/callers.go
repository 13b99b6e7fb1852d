package culprit

import (
	"cmp"
	"slices"
)

// Caller is one function of the program's own code (outside the runtime and the standard
// library) with what every stack through it moved, as pprof's -cum counts it: the sites
// under it, its own allocations included. A request path that keeps a little at many sites
// keeps it all under the function those sites share.
type Caller struct {
	Function string
	// Value is, in a Table, the sum of the stacks through the function; in a DiffResult, the
	// sum of their deltas.
	Value int64
	// Sites is how many sites (by function) the stacks through it that moved up attribute to.
	Sites int
	// Depth is how many frames lie between the function and the root of the heaviest stack
	// through it (0: it is the root): of two callers that hold the same, the deeper one is
	// closer to the sites.
	Depth int
	// Stack is that heaviest stack (leaf first).
	Stack []string
}

// callers sums the stacks' weights (new minus old; a Table's value) by each function of
// the program's own code they pass through, each function once per stack however often it
// recurs in it, sorted by Value, largest first (ties: the deeper one, then by name). Only
// functions with a positive value over minSites sites or more are kept (over one site, a
// function holds what that site holds); stacks says whether to name their heaviest stacks.
func (c *collapser) callers(minSites int, stacks bool) []Caller {
	type acc struct {
		value int64
		site  string              // the first site under it
		more  map[string]struct{} // the others, once there are
		best  *stackSum
		depth int
	}
	by := map[string]*acc{}
	var seen []string
	for _, st := range c.stacks {
		w := st.weight()
		if w == 0 {
			continue
		}
		ids := c.decode(st.key)
		seen = seen[:0]
		for i, id := range ids {
			f := &c.table[id]
			if f.class != classMain && f.class != classThirdParty || slices.Contains(seen, f.fn) {
				continue
			}
			seen = append(seen, f.fn)
			a := by[f.fn]
			if a == nil {
				a = &acc{}
				by[f.fn] = a
			}
			a.value += w
			switch site := st.site.Function; {
			case w <= 0 || site == a.site:
			case a.site == "":
				a.site = site
			default:
				if a.more == nil {
					a.more = map[string]struct{}{}
				}
				a.more[site] = struct{}{}
			}
			if a.best == nil || outweighs(1, w, a.best.weight(), st.key, a.best.key) {
				a.best, a.depth = st, len(ids)-1-i
			}
		}
	}
	var out []Caller
	for fn, a := range by {
		sites := len(a.more)
		if a.site != "" {
			sites++
		}
		if a.value <= 0 || sites < minSites {
			continue
		}
		cl := Caller{Function: fn, Value: a.value, Sites: sites, Depth: a.depth}
		if stacks {
			cl.Stack = c.names(a.best)
		}
		out = append(out, cl)
	}
	slices.SortFunc(out, func(a, b Caller) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), cmp.Compare(b.Depth, a.Depth), cmp.Compare(a.Function, b.Function))
	})
	return out
}

// sharedNear: a caller holding this share of what the heaviest caller holds holds the same
// growth (a heap profile samples every 512 KiB: two callers of one trunk differ by a sample
// or two).
const sharedNear = 0.9

// Shared is the function the sites of callers share (callers as Table.ByCaller or
// DiffResult.ByCaller give them, largest first): of the callers over two or more sites that
// hold nearly what the heaviest of them holds (sharedNear of it), the one holding least,
// the deepest on a tie: the trunk's last function before it branches out to the sites.
// ok is false when there is none.
func Shared(callers []Caller) (Caller, bool) {
	var best Caller
	var top int64
	ok := false
	for _, c := range callers {
		if c.Sites < 2 {
			continue // the site itself
		}
		if !ok {
			best, top, ok = c, c.Value, true
			continue
		}
		if float64(c.Value) < sharedNear*float64(top) {
			break // sorted: none further holds as much
		}
		if c.Value < best.Value || c.Value == best.Value && c.Depth > best.Depth {
			best = c
		}
	}
	return best, ok
}
