package diagnose

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/evidence"
)

// siteLeakSnaps bounds the heap snapshots read to follow each site.
const siteLeakSnaps = 16

// siteLeak judges, site by site, the memory each top growing allocation site retains across
// the periodic heap snapshots. A leak the live heap's total hides still shows in the site that
// holds it: when the GC runs only during bursts, every live-heap reading holds a burst's
// buffers; a cache shrinking beside a growing map cancels it out. The growth that matters is
// the live heap's (leakLimits against the heap profiles' first total). It returns the most
// confident growing site; ok is false when none grows. Sites whose memory is in flight
// (heapGrowth.inFlight) are not followed.
func siteLeak(ev *evidence.Evidence, hg *heapGrowth) (c Culprit, g growth, pts []evidence.Point, ok bool) {
	if hg == nil || len(hg.refs) < minConfirmPoints {
		return Culprit{}, growth{}, nil, false
	}
	refs, diff := hg.refs, hg.inuse
	cands := topGrowing(diff, 5)
	series, totals := siteSeries(ev, refs, cands, siteLeakSnaps)
	if len(totals) == 0 {
		return Culprit{}, growth{}, nil, false
	}
	lim := leakLimits
	lim.minAbs = math.Max(lim.minAbs, lim.minRel*totals[0].V)
	lim.minRel = 0
	for _, d := range cands {
		if hg.inFlight(d.Site.Function) {
			continue
		}
		s := observed(series[d.Site.Function])
		sg := judgeGrowth(s, lim, 0)
		sg.capUnseen(ev, s, ev.LiveSeen)
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

// settledSnaps drops the snapshots taken while the process was starting, as settled does
// for readings.
func settledSnaps(ev *evidence.Evidence, refs []evidence.Snapshot) []evidence.Snapshot {
	pts := make([]evidence.Point, len(refs))
	for i, r := range refs {
		pts[i] = evidence.Point{T: r.T}
	}
	return refs[len(refs)-len(settled(ev, pts)):]
}

// observed keeps the first of each run of equal readings. The live heap is measured by a
// GC: a heap profile, or a gauge sampled between two cycles, repeats the last cycle's value,
// and the repeats are not new observations (they would also date the last one too late).
func observed(pts []evidence.Point) []evidence.Point {
	if len(pts) < 2 {
		return pts
	}
	out := make([]evidence.Point, 0, len(pts))
	for i, p := range pts {
		if i == 0 || p.V != pts[i-1].V {
			out = append(out, p)
		}
	}
	return out
}

// siteLeakFinding is the heap-leak finding of a growing site whose growth the live heap's
// total did not show.
func siteLeakFinding(ev *evidence.Evidence, c Culprit, g growth, pts []evidence.Point) Finding {
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
	timeToBudget(ev, &f, perMin/60)
	return f
}
