package words

import (
	"fmt"
	"github.com/memdoctor/memdoctor/facts"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

// liveWhat names the reading of the live heap a heap leak was judged on.
var liveWhat = map[rule.LiveWhat]string{
	rule.LiveReachable: "heap the GC found reachable",
	rule.LiveInUse:     "heap in use, whose lows after each GC are the live heap",
	rule.LiveGoal:      "live heap as the GC's goal follows it (goal = live x (1 + GOGC/100))",
}

func heapLeak(f *Finding, c *rule.HeapLeakCase, fs *facts.Facts) {
	g, q := c.Rise, c.Quantum
	f.Title = fmt.Sprintf("the live heap grows %s/min and does not come back: %s -> %s", bytesStr(g.PerMinute), sizeStr(g.First, q), bytesStr(g.Last))
	f.Detail = fmt.Sprintf("The %s (%s) went from %s to %s over %s, judged on its lows between bursts: it rose consistently "+
		"(Kendall's tau %.2f, Mann-Kendall %s over %d lows) and is %s at the end. Memory that stays reachable keeps "+
		"growing: something adds to a map, slice, cache or buffer and never lets go.",
		liveWhat[c.What], c.Src, sizeStr(g.First, q), bytesStr(g.Last), humanDuration(g.Span.Seconds()), g.Tau, pValue(g.P), g.N, risingWord(g))
	f.Evidence = map[string]float64{
		"live_heap_start_bytes":   g.First,
		"live_heap_end_bytes":     g.Last,
		"growth_bytes":            g.Grew,
		"growth_bytes_per_minute": g.PerMinute,
		"window_seconds":          g.Span.Seconds(),
		"kendall_tau":             g.Tau,
		"mann_kendall_p":          g.P,
		"late_slope_ratio":        g.LateSlopeRatio,
		"floor_points_count":      float64(g.N),
	}
	if g.Confidence == rule.Suspected {
		f.Title = fmt.Sprintf("the live heap may be leaking: its floor rose %s -> %s", sizeStr(g.First, q), bytesStr(g.Last))
		switch {
		case c.Churn > 0:
			f.Detail += fmt.Sprintf(" Most of that growth is memory its sites allocated %.0f times over in the window: what they held at each "+
				"profile's GC was in flight (requests, buffers), and a few profiles of it that happen to rise are not yet a leak.", c.Churn)
		case c.Unseen > 0 && c.Lag:
			f.Detail += fmt.Sprintf(" The last heap profile shows the heap as a GC found it about %s before the window's end: a heap profile "+
				"shows the GC before the last one, and profiles that repeat their predecessor show that GCs ran less often than profiles were taken. "+
				"Whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(c.Unseen.Seconds()))
		case c.Unseen > 0:
			f.Detail += fmt.Sprintf(" No GC measured the live heap in the last %s of the window: whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(c.Unseen.Seconds()))
		}
		if c.HeldBy == nil { // else the goroutine leak explains it: nothing to watch for
			f.Detail += notYet(g.WatchMore)
		}
	}
	budget(f, c.Budget)
	leakSites(f, c.Sites, fs)
	f.Advice = append(f.Advice,
		"Bound what grows: a size or entry cap with eviction, a TTL shorter than what the growth can afford, or one global budget shared by all keys instead of an unbounded buffer per key.",
		"Check that entries are deleted from maps when their connection, request or session ends, and that goroutines holding references exit.")
	heldBy(f, c.HeldBy)
}

func siteLeak(f *Finding, c *rule.SiteLeakCase, fs *facts.Facts) {
	g := c.Rise
	by, at := "by "+c.Site.Function, "at "+c.Site.Function
	if n := c.Site.Sites; n > 0 {
		by = fmt.Sprintf("under %s (%d sites)", c.Site.Function, n)
		at = fmt.Sprintf("under %s, at %d sites none of which grew by what matters alone,", c.Site.Function, n)
	}
	f.Title = fmt.Sprintf("the heap retained %s grows %s/min and does not come back: %s -> %s",
		by, bytesStr(g.PerMinute), bytesStr(g.First), bytesStr(g.Last))
	f.Detail = fmt.Sprintf("Across %d heap profiles over %s, the memory allocated %s and still reachable rose consistently "+
		"(Kendall's tau %.2f, Mann-Kendall %s) and is %s at the end. The live heap's total does not show it as clearly: "+
		"other memory swings around it (a burst's buffers live when the GC runs, or a shrinking neighbour). "+
		"Something adds to a map, slice, cache or buffer and never lets go.",
		g.N, humanDuration(g.Span.Seconds()), at, g.Tau, pValue(g.P), risingWord(g))
	f.Evidence = map[string]float64{
		"site_retained_start_bytes": g.First,
		"site_retained_end_bytes":   g.Last,
		"growth_bytes":              g.Grew,
		"growth_bytes_per_minute":   g.PerMinute,
		"window_seconds":            g.Span.Seconds(),
		"kendall_tau":               g.Tau,
		"mann_kendall_p":            g.P,
		"late_slope_ratio":          g.LateSlopeRatio,
		"heap_profiles_count":       float64(g.N),
	}
	if g.Confidence == rule.Suspected {
		f.Title = fmt.Sprintf("the heap retained %s may be leaking: %s -> %s", by, bytesStr(g.First), bytesStr(g.Last))
		if c.HeldBy == nil {
			f.Detail += notYet(g.WatchMore)
		}
	}
	budget(f, c.Budget)
	leakSites(f, c.Sites, fs)
	heldBy(f, c.HeldBy)
}

// budget says when memory reaches the budget at a growth's rate.
func budget(f *Finding, b *rule.BudgetTime) {
	if b == nil {
		return
	}
	f.Evidence["memory_budget_bytes"] = b.Bytes
	if b.Seconds <= 0 {
		return
	}
	f.Evidence["time_to_budget_seconds"] = b.Seconds
	f.Detail += fmt.Sprintf(" At this rate the process reaches its memory budget (%s) in about %s.", bytesStr(b.Bytes), humanDuration(b.Seconds))
}

// heldBy says a heap leak that a goroutine leak explains.
func heldBy(f *Finding, h *rule.Held) {
	if h == nil {
		return
	}
	grows := "grows"
	if f.Confidence == rule.Suspected {
		grows = "may grow"
	}
	f.Title = fmt.Sprintf("the live heap %s with the leaked goroutines: %s for %.0f more goroutines (%s each)", grows, bytesStr(h.Bytes), h.Goroutines, bytesStr(h.Bytes/h.Goroutines))
	f.Detail += " It grows no faster than what the leaked goroutines hold each: fixing the goroutine leak frees it (see goroutine-leak)."
}
