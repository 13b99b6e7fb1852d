package facts

import "github.com/memdoctor/memdoctor/evidence"

// Shared is the function of the program's own code that the sites that grew between two heap
// profiles share (evidence.SharedCaller), followed across the heap profiles. A request path
// that keeps a little at each of many sites keeps all of it under the function they share,
// though no site alone holds enough to matter.
type Shared struct {
	// Caller.Value is what grew under it between the profiles compared; Caller.Sites over
	// how many growing sites.
	Caller Caller
	// Points is what it held in each profile followed.
	Points []Point
	// Turnover is what it allocated between the profiles compared over what it held at the
	// last (0 without alloc_space): see HeapGrowth.Turnover.
	Turnover float64
}

// sharedIn is the function the sites that grew in diff share; nil when none is over two.
func sharedIn(diff *SiteDiff) *Shared {
	c, ok := evidence.SharedCaller(diff.ByCaller)
	if !ok {
		return nil
	}
	return &Shared{Caller: c}
}

// callerValue is what a profile's stacks through function hold (0 when none does).
func callerValue(tab *SiteTable, function string) int64 { return callerDelta(tab.ByCaller, function) }

// callerDelta is what moved under function in a diff's callers (0 when it is not among them).
func callerDelta(callers []Caller, function string) int64 {
	for _, c := range callers {
		if c.Function == function {
			return c.Value
		}
	}
	return 0
}
