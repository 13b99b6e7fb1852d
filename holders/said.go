package holders

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/units"
)

// The forms of a result shown inside a heap-leak finding (the text report, the HTML finding,
// the MCP summary) all take their lines from here, so that what a reading adds to a culprit
// reaches every form at once.

// Said is one path as a finding says it: "held by main.registry[value].history[i], 100%,
// 48.0 MiB" (its share of the culprit's reachable sampled bytes, and the bytes it holds).
func (p Path) Said() string {
	return fmt.Sprintf("held by %s, %s, %s", clean(p.Expr), units.Percent(p.Share), units.Bytes(p.Bytes))
}

// Lines are what a finding shows under a culprit: its heaviest paths (at most n; n <= 0:
// all), one line each, then how much of its memory they cover when not all of it, then what
// to cut ("cut X: frees N (P of the culprit)"), or why nothing holds it. (One path says its
// own share.)
func (c *Culprit) Lines(n int) []string {
	switch {
	case c.Samples == 0:
		return []string{"held by: none of its objects was among the heap profile's samples when the heap was read"}
	case len(c.Paths) == 0:
		return []string{"held by nothing: its sampled objects are unreachable, freed at the next GC"}
	}
	var out []string
	for i, p := range c.Paths {
		if n > 0 && i == n {
			out = append(out, fmt.Sprintf("… %d more path(s)", len(c.Paths)-n))
			break
		}
		out = append(out, p.Said())
	}
	if len(c.Paths) > 1 && c.Covered < 0.999 {
		out = append(out, fmt.Sprintf("(these paths hold %s of its reachable sampled bytes)", units.Percent(c.Covered)))
	}
	for _, cut := range c.Cuts {
		out = append(out, cut.Said())
	}
	return out
}

// Of returns the culprit of the result whose site is function (its full name, or the end of
// it after a dot or a slash, as --site takes it); nil when the reading had no such site.
func (r *Result) Of(function string) *Culprit {
	if r == nil || function == "" {
		return nil
	}
	for i := range r.Culprits {
		s := r.Culprits[i].Site
		if s == function || strings.HasSuffix(function, "."+s) || strings.HasSuffix(function, "/"+s) {
			return &r.Culprits[i]
		}
	}
	return nil
}

// SkippedSaid says what of the stacks the reading could not read ("" when it read them all):
// a note of the reading, and a sentence of the finding.
func (r *Result) SkippedSaid() string {
	if r == nil || r.SkippedRanges == 0 {
		return ""
	}
	what := "stack ranges"
	if r.SkippedRanges == 1 {
		what = "stack range"
	}
	return fmt.Sprintf("%d %s (%s) could not be read while the process was stopped: paths through them are missing",
		r.SkippedRanges, what, units.Bytes(float64(r.SkippedBytes)))
}
