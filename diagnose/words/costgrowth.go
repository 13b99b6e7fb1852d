package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

func costGrowth(f *Finding, c *rule.CostCase) {
	g := c.Rise
	f.Title = fmt.Sprintf("the program allocates more and more: %s/s -> %s/s", bytesStr(g.First), bytesStr(g.Last))
	f.Detail = fmt.Sprintf("The allocation rate rose from %s/s to %s/s over %s (Kendall's tau %.2f, Mann-Kendall %s over %d slices), %s at the end. "+
		"If the load was steady, each request costs more and more: something per request grows (a slice copied or scanned whole, a map iterated, a cache rebuilt).",
		bytesStr(g.First), bytesStr(g.Last), humanDuration(g.Span.Seconds()), g.Tau, pValue(g.P), g.N, risingWord(g))
	f.Evidence = map[string]float64{
		"alloc_start_bytes_per_second": g.First,
		"alloc_end_bytes_per_second":   g.Last,
		"window_seconds":               g.Span.Seconds(),
		"kendall_tau":                  g.Tau,
		"mann_kendall_p":               g.P,
	}
	if gc := c.GC; gc != nil {
		a, b := gc[0], gc[1]
		f.Evidence["gc_start_per_second"], f.Evidence["gc_end_per_second"] = a, b
		f.Detail += fmt.Sprintf(" The GC went from %.1f to %.1f cycles per second.", a, b)
	}
	if c.SiteRatio > 0 && len(f.Culprits) > 0 && c.Concentration > 1 {
		top := f.Culprits[0]
		rose := fmt.Sprintf("rose %.1f times over (%.1f times as many times over as the rest of the program's)", c.SiteRatio, c.Concentration)
		title := fmt.Sprintf("allocates %.1f times what it did", c.SiteRatio)
		if c.SiteRatio > fromNothing {
			rose = fmt.Sprintf("went from next to nothing (%s/s) to %s/s", bytesStr(c.SiteFrom), bytesStr(c.SiteTo))
			title = fmt.Sprintf("went from allocating next to nothing to %s/s", bytesStr(c.SiteTo))
		}
		f.Detail += fmt.Sprintf(" The climb is %s's: its own allocation %s, and it made %s of the climb; "+
			"more traffic would raise every site alike.", top.Function, rose, pct(top.Share))
		if f.Severity.Rank() >= rule.Warning.Rank() {
			f.Title = fmt.Sprintf("each request costs more and more: %s %s, %s/s -> %s/s in all", top.Function, title, bytesStr(g.First), bytesStr(g.Last))
		}
	}
	f.Advice = append(f.Advice,
		"Check whether the traffic grew over the window; if it did not, compare what the top sites allocate per request early and late (go tool pprof -diff_base on the snapshots).",
		"Look for per-request work that grows with the process's age: copying or sorting a growing slice, rebuilding a growing map, rendering a growing list.")
}
