package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

// burst says a growth seen across profiles taken too close together for a trend; mode is
// what recorded them (facts.Facts.Mode).
func burst(f *Finding, c *rule.BurstCase, mode string) {
	n := func(v float64) string {
		if c.Unit == "bytes" {
			return bytesStr(v)
		}
		return fmt.Sprintf("%.0f", v)
	}
	span := humanDuration(c.Span.Seconds())
	if c.Unit == "bytes" {
		heapBurst(f, c, span)
	} else {
		f.Title = fmt.Sprintf("goroutines piling up in %s: %+.0f across %d goroutine profiles %s apart at most", c.Top.Function, c.Grew, c.N, span)
		f.Detail = fmt.Sprintf("%d goroutine counts over %s are too close together for a trend (one needs %s or more). From the first goroutine "+
			"profile to the last, the goroutines went %s -> %s, and %s more are %s in %s.", c.N, span, humanDuration(c.Need.Seconds()),
			n(c.From), n(c.To), n(c.Grew), waiting(c.State), c.Top.Function)
		f.Evidence["goroutines_start_count"] = c.From
		f.Evidence["goroutines_end_count"] = c.To
		f.Evidence["top_site_goroutines_count"] = c.Grew
		if m := c.Made; m != nil && len(m.Makers) > 0 {
			f.Detail += madeBy(m)
		}
	}
	f.Evidence["window_seconds"] = c.Span.Seconds()
	f.Detail += fmt.Sprintf(" Take the next ones %s apart or more, over %s at least (memdoctor watch does: it takes one every 10 s), "+
		"or compare these two: go tool pprof -diff_base %s %s", humanDuration(c.Apart.Seconds()), humanDuration(c.Need.Seconds()), c.Old, c.New)
	advice := fmt.Sprintf("Watch the service for a minute to confirm or dismiss it: memdoctor watch --duration 1m URL (or take a profile every %s)",
		humanDuration(c.Apart.Seconds()))
	if mode == "run" || mode == "demo" { // the program was stopped: record it again, for longer
		advice = fmt.Sprintf("Record the program for a minute or more to confirm or dismiss it: memdoctor %s --duration 1m (it takes a profile every --interval, 10 s by default)", mode)
	}
	f.Advice = append(f.Advice, advice)
}

// heapBurst says a heap growth seen across profiles too close together for a trend: at one
// site, under the function many sites share, or spread over sites none of which holds much.
func heapBurst(f *Finding, c *rule.BurstCase, span string) {
	growth := "%s holds %s more."
	switch {
	case c.Doubled:
		f.Title = fmt.Sprintf("the heap in use more than doubled across %d heap profiles %s apart at most, %s -> %s: a leak, or a burst in flight",
			c.N, span, bytesStr(c.From), bytesStr(c.To))
	case c.Top.Sites > 0:
		f.Title = fmt.Sprintf("the heap held under %s grew %s across %d heap profiles %s apart at most, at %d sites: a leak, or a burst in flight",
			c.Top.Function, bytesStr(c.Grew), c.N, span, c.Top.Sites)
		growth = "the %[3]d sites under %[1]s hold %[2]s more."
	default:
		f.Title = fmt.Sprintf("the heap held by %s grew %s across %d heap profiles %s apart at most: a leak, or a burst in flight",
			c.Top.Function, bytesStr(c.Grew), c.N, span)
	}
	f.Detail = fmt.Sprintf("%d heap profiles over %s are too close together for a trend (one needs %s or more): each shows the heap as "+
		"the GC before it found it, and a burst in flight looks the same as a leak's start. From the first to the last, the memory in use "+
		"went %s -> %s", c.N, span, humanDuration(c.Need.Seconds()), bytesStr(c.From), bytesStr(c.To))
	if c.Doubled {
		f.Detail += ", rising through every profile, spread over sites none of which grew by what matters alone"
		if c.Largest.Function != "" {
			f.Detail += fmt.Sprintf(" (the most, %s, holds %s more)", c.Largest.Function, bytesStr(float64(c.Largest.Bytes)))
		}
		f.Detail += "."
	} else {
		f.Detail += ", and " + fmt.Sprintf(growth, c.Top.Function, bytesStr(c.Grew), c.Top.Sites)
		if c.Top.Sites > 0 && c.Largest.Function != "" {
			f.Detail += fmt.Sprintf(" No site alone grew by what matters (the most, %s, holds %s more): a request path that keeps a little at each of "+
				"many sites keeps it all under the function they share.", c.Largest.Function, bytesStr(float64(c.Largest.Bytes)))
		}
		f.Evidence["top_site_bytes"] = c.Grew
	}
	f.Evidence["heap_profiles_count"] = float64(c.N)
	f.Evidence["live_heap_start_bytes"] = c.From
	f.Evidence["live_heap_end_bytes"] = c.To
}
