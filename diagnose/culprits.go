package diagnose

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/facts"
)

// culpritFromDelta turns a diff row into a finding's culprit.
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

// pprofDiffCommand is the go tool pprof command that shows what a finding compares.
func pprofDiffCommand(typ string, old, new facts.Snapshot) string {
	return fmt.Sprintf("go tool pprof -sample_index=%s -diff_base %s %s", typ, old.Path, new.Path)
}

// minForeignShare is the share below which a culprit outside the program's own code (a
// stack of runtime and standard library frames only, such as the pprof handler's own
// compression) is left out.
const minForeignShare = 0.10

// minShare is the share below which culprits after the first are left out.
const minShare = 0.01

// keepCulprits drops minor culprits that are not the program's own code, and keeps at most n.
func keepCulprits(cs []Culprit, n int) []Culprit {
	out := cs[:0:0]
	for _, c := range cs {
		if !c.Own && c.Share < minForeignShare || len(out) > 0 && c.Share < minShare || profilerCost(c.Stack) {
			continue
		}
		if out = append(out, c); len(out) == n {
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
