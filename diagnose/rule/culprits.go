package rule

import (
	"strings"

	"github.com/memdoctor/memdoctor/facts"
)

// culpritFromDelta turns a diff row into a verdict's culprit.
func culpritFromDelta(d facts.SiteDelta, unit string, share float64) Culprit {
	c := Culprit{
		Function: d.Site.Function, File: d.Site.File, Line: d.Site.Line,
		Share: share, Stack: d.Stack, Own: d.Site.Own,
	}
	if unit == "bytes" {
		c.Bytes = d.Delta
	} else {
		c.Count = d.Delta
	}
	return c
}

// keepCulprits drops minor culprits that are not the program's own code, and keeps at most
// th.Max.
func keepCulprits(cs []Culprit, th *Culprits) []Culprit {
	out := cs[:0:0]
	for _, c := range cs {
		if !c.Own && c.Share < th.MinForeignShare || len(out) > 0 && c.Share < th.MinShare || profilerCost(c.Stack) {
			continue
		}
		if out = append(out, c); len(out) == th.Max {
			break
		}
	}
	return out
}

// profilerCost reports a stack of the profiler itself: the pprof handlers build and
// compress profiles when memdoctor asks for them; that is the observer's cost, never the
// program's culprit.
func profilerCost(stack []string) bool {
	for _, fr := range stack {
		if strings.HasPrefix(fr, "runtime/pprof.") || strings.HasPrefix(fr, "net/http/pprof.") {
			return true
		}
	}
	return false
}
