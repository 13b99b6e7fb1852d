package diagnose

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/facts"
)

// siteLeak judges, site by site, the memory each top growing allocation site retains across
// the periodic heap snapshots. A leak the live heap's total hides still shows in the site that
// holds it: when the GC runs only during bursts, every live-heap reading holds a burst's
// buffers; a cache shrinking beside a growing map cancels it out. The growth that matters is
// the live heap's (leakLimits against the heap profiles' first total). It returns the most
// confident growing site; ok is false when none grows. Sites whose memory is in flight
// (heapGrowth.inFlight) are not followed.
func siteLeak(hg *facts.HeapGrowth, f *facts.Facts) (c Culprit, g growth, pts []facts.Point, ok bool) {
	if hg == nil || len(hg.Refs) < minConfirmPoints || len(hg.Totals) == 0 {
		return Culprit{}, growth{}, nil, false
	}
	diff := hg.InUse
	lim := leakLimits
	lim.minAbs = math.Max(lim.minAbs, lim.minRel*hg.Totals[0].V)
	lim.minRel = 0
	for _, site := range hg.Sites {
		d := site.Delta
		if inFlight(hg, d.Site.Function) {
			continue
		}
		s := site.Points
		sg := judgeGrowth(s, lim, 0)
		sg.capUnseen(f, s, f.LiveSeen)
		if better(sg, g) {
			c, g, pts, ok = culpritFromDelta(d, diff.Unit, float64(d.Delta)/float64(max(diff.Growth, 1))), sg, s, sg.conf != ""
		}
	}
	return c, g, pts, ok
}

// better reports whether growth a is a stronger verdict than b: confirmed over suspected
// over nothing, then the larger growth.
func better(a, b growth) bool {
	rank := func(g growth) int {
		switch g.conf {
		case Confirmed:
			return 2
		case Suspected:
			return 1
		}
		return 0
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra > rb
	}
	return a.conf != "" && a.grew() > b.grew()
}

// siteLeakFinding is the heap-leak finding of a growing site whose growth the live heap's
// total did not show.
func siteLeakFinding(fs *facts.Facts, c Culprit, g growth, pts []facts.Point) Finding {
	perMin := g.perMinute()
	f := Finding{
		Kind:             KindHeapLeak,
		Severity:         Warning,
		Confidence:       g.conf,
		WatchMoreSeconds: g.watchMore.Seconds(),
		Title: fmt.Sprintf("the heap retained by %s grows %s/min and does not come back: %s -> %s",
			c.Function, bytesStr(perMin), bytesStr(g.first), bytesStr(g.last)),
		Detail: fmt.Sprintf("Across %d heap profiles over %s, the memory allocated at %s and still reachable rose consistently "+
			"(Kendall's tau %.2f, Mann-Kendall p=%.2g) and is %s at the end. The live heap's total does not show it as clearly: "+
			"other memory swings around it (a burst's buffers live when the GC runs, or a shrinking neighbour). "+
			"Something adds to a map, slice, cache or buffer and never lets go.",
			g.n, humanDuration(g.span.Seconds()), c.Function, g.tau, g.p, risingWord(g)),
		Evidence: map[string]float64{
			"site_retained_start_bytes": g.first,
			"site_retained_end_bytes":   g.last,
			"growth_bytes":              g.grew(),
			"growth_bytes_per_minute":   perMin,
			"window_seconds":            g.span.Seconds(),
			"kendall_tau":               g.tau,
			"mann_kendall_p":            g.p,
			"late_slope_ratio":          g.lateRatio,
			"heap_profiles_count":       float64(g.n),
		},
		Start: pts[0].T, End: pts[len(pts)-1].T,
	}
	if g.conf == Suspected {
		f.Title = fmt.Sprintf("the heap retained by %s may be leaking: %s -> %s", c.Function, bytesStr(g.first), bytesStr(g.last))
		f.Detail += fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(g.watchMore.Seconds()))
	}
	timeToBudget(fs, &f, perMin/60)
	return f
}
