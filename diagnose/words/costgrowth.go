package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

func costGrowth(f *Finding, c *rule.CostCase) {
	g := c.Rise
	f.Title = fmt.Sprintf("the program allocates more and more: %s/s -> %s/s", bytesStr(g.First), bytesStr(g.Last))
	f.Detail = fmt.Sprintf("The allocation rate rose from %s/s to %s/s over %s (Kendall's tau %.2f, Mann-Kendall p=%.2g over %d slices), %s at the end. "+
		"If the load was steady, each request costs more and more: something per request grows (a slice copied or scanned whole, a map iterated, a cache rebuilt).",
		bytesStr(g.First), bytesStr(g.Last), humanDuration(g.Span.Seconds()), g.Tau, g.P, g.N, risingWord(g))
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
	f.Advice = append(f.Advice,
		"Check whether the traffic grew over the window; if it did not, compare what the top sites allocate per request early and late (go tool pprof -diff_base on the snapshots).",
		"Look for per-request work that grows with the process's age: copying or sorting a growing slice, rebuilding a growing map, rendering a growing list.")
}
