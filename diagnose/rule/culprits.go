package rule

import (
	"slices"
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

// keepCulprits keeps the program's own code: the runtime and the standard library are never
// culprits (runtime.mallocgc, internal/poll's waits: nothing there is for the user to change;
// the words still say where the goroutines wait). A site with no Go name (an unsymbolized
// address, a C symbol) stays: nothing says it is not the program's. It drops minor culprits
// after the first, and keeps at most th.Max.
func keepCulprits(cs []Culprit, th *Culprits) []Culprit {
	out := cs[:0:0]
	for _, c := range cs {
		if !c.Own && goName(c.Function) || len(out) > 0 && c.Share < th.MinShare || profilerCost(c.Stack) {
			continue
		}
		if out = append(out, c); len(out) == th.Max {
			break
		}
	}
	return out
}

// ownFirst moves the culprit naming function to the front of cs, adding site when cs lacks
// it: a finding's list starts with the site its title names.
func ownFirst(cs []Culprit, site Culprit) []Culprit {
	i := slices.IndexFunc(cs, func(c Culprit) bool { return c.Function == site.Function })
	if i < 0 {
		return append([]Culprit{site}, cs...)
	}
	c := cs[i]
	return append([]Culprit{c}, slices.Delete(slices.Clone(cs), i, i+1)...)
}

// profilerCost reports a stack of the observer itself (facts.Observer): the observer's cost,
// never the program's culprit.
func profilerCost(stack []string) bool { return facts.Observer(stack) }

// goName reports a Go function's name (a package path, a dot, a name), as a profile names
// the runtime's and the standard library's functions, or no name at all (a sample without a
// stack); an unsymbolized address (0x420cee) or a C symbol is not one.
func goName(function string) bool {
	return function == "(unknown)" || !strings.HasPrefix(function, "0x") && strings.Contains(function, ".")
}
