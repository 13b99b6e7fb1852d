package diagnose

import (
	"fmt"
	"math"
	"time"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/session"
)

func init() { register(KindHeapLeak, heapLeak) }

// Thresholds of the heap-leak rule.
const (
	leakMinSpan   = 10 * time.Second // a trend needs time
	leakMinPoints = 8
	leakAlpha     = 0.001 // Mann-Kendall significance over the whole window
	leakMinGrowth = 8 << 20
	leakMinRatio  = 0.20 // growth relative to the starting live heap
	// The growth must go on: in the window's second half the trend must still be significant
	// and at least this share of the whole window's slope (a warm-up that plateaus is not a
	// leak).
	leakLateSlope = 0.3
)

// heapLeak reports a live heap (what the GC found reachable) that grows steadily. Resident
// memory growing while the live heap is flat is not a heap leak, so RSS is never used here.
func heapLeak(in *Input) []Finding {
	live, src := in.LiveHeap()
	pts := between(live, in.Start, in.End)
	if len(pts) < leakMinPoints || pts[len(pts)-1].T.Sub(pts[0].T) < leakMinSpan {
		return nil
	}
	tr := trend(pts)
	if !tr.Increasing(leakAlpha) {
		return nil
	}
	mid := pts[0].T.Add(pts[len(pts)-1].T.Sub(pts[0].T) / 2)
	late := trend(between(pts, mid, in.End))
	// GCs grow rarer as the heap grows, so the second half may hold few cycles: with fewer
	// than 6, ask only that they keep rising.
	lateRising := late.Increasing(0.05) || late.N >= 3 && late.N < 6 && late.Z > 0
	if !lateRising || late.Slope < leakLateSlope*tr.Slope {
		return nil
	}
	growth := tr.Last - tr.First
	if growth < leakMinGrowth || growth < leakMinRatio*math.Max(tr.First, 1) {
		return nil
	}
	perMin := tr.Slope * 60
	f := Finding{
		Kind:     KindHeapLeak,
		Severity: Warning,
		Title:    fmt.Sprintf("the live heap grows %s/min and does not come back", bytesStr(perMin)),
		Detail: fmt.Sprintf("The heap the GC found reachable (%s) went from %s to %s over %s: a steady rise "+
			"(Mann-Kendall p=%.1g), still rising in the second half. Memory that stays reachable keeps "+
			"growing: something adds to a map, slice, cache or buffer and never lets go.",
			src, bytesStr(tr.First), bytesStr(tr.Last), tr.Span.Round(time.Second), tr.P),
		Evidence: map[string]float64{
			"live_heap_start_bytes":        tr.First,
			"live_heap_end_bytes":          tr.Last,
			"growth_bytes_per_minute":      perMin,
			"late_growth_bytes_per_minute": late.Slope * 60,
			"window_seconds":               tr.Span.Seconds(),
			"mann_kendall_z":               tr.Z,
			"mann_kendall_p":               tr.P,
			"live_heap_points_count":       float64(tr.N),
		},
		Start: pts[0].T, End: pts[len(pts)-1].T,
	}
	// Time to the budget: resident memory grows with the live heap, roughly twice as fast
	// with GOGC=100 (the goal follows the live heap); use RSS's own trend when there is one.
	if in.Budget > 0 {
		rssSlope := 2 * tr.Slope
		cur := 2 * tr.Last
		if rss := between(in.RSS(), in.Start, in.End); len(rss) >= leakMinPoints {
			rt := trend(rss)
			cur = rss[len(rss)-1].V
			if rt.Slope > 0 {
				rssSlope = rt.Slope
			}
		}
		left := float64(in.Budget) - cur
		f.Evidence["memory_budget_bytes"] = float64(in.Budget)
		if left > 0 && rssSlope > 0 {
			secs := left / rssSlope
			f.Evidence["time_to_budget_seconds"] = secs
			f.Detail += fmt.Sprintf(" At this rate the process reaches its memory budget (%s) in about %s.",
				bytesStr(float64(in.Budget)), humanDuration(secs))
			if secs < 3600 {
				f.Severity = Critical
			}
		}
	}
	refs := in.periodicHeaps()
	if len(refs) >= 2 {
		f.Culprits = in.growingSites(refs)
		old, new := refs[0], refs[len(refs)-1]
		f.Profiles = profileNames(old, new)
		f.Advice = append(f.Advice, "See what the growing objects are and who holds them: "+pprofDiffCommand("inuse_space", old, new))
	} else {
		in.notef("heap-leak: no pair of heap profiles to name the growing allocation sites (is the pprof endpoint reachable?)")
	}
	f.Advice = append(f.Advice,
		"Bound what grows: a size or entry cap with eviction, a TTL shorter than what the growth can afford, or one global budget shared by all keys instead of an unbounded buffer per key.",
		"Check that entries are deleted from maps when their connection, request or session ends, and that goroutines holding references exit.")
	return []Finding{f}
}

// growingSites ranks allocation sites by how much their inuse_space grew across the
// snapshots, keeping those whose growth is steady (not a site that merely allocates a lot or
// swings).
func (in *Input) growingSites(refs []session.ProfileRef) []Culprit {
	diff, err := in.heapDiff(refs[0], refs[len(refs)-1], "inuse_space")
	if err != nil {
		in.notef("heap-leak: %v", err)
		return nil
	}
	// The value of each candidate at up to 8 snapshots spread over the window.
	const maxCandidates, maxSnaps = 10, 8
	var cands []culprit.Delta
	for _, d := range diff.ByFunction {
		if d.Delta <= 0 || len(cands) == maxCandidates {
			break
		}
		cands = append(cands, d)
	}
	series := make(map[string][]Point, len(cands))
	for _, ref := range spread(refs, maxSnaps) {
		p, err := in.Profile(ref)
		if err != nil {
			continue // named in the notes by Profile
		}
		tab, err := culprit.Aggregate(p, "inuse_space", in.Culprit)
		if err != nil {
			continue
		}
		byFn := make(map[string]int64, len(tab.ByFunction))
		for _, e := range tab.ByFunction {
			byFn[e.Site.Function] = e.Value
		}
		for _, c := range cands {
			series[c.Site.Function] = append(series[c.Site.Function], Point{ref.Time, float64(byFn[c.Site.Function])})
		}
	}
	var out []Culprit
	for _, c := range cands {
		s := series[c.Site.Function]
		if len(s) >= 4 {
			if tr := trend(s); tr.Z < 1 { // not rising across the snapshots: a swing, not growth
				continue
			}
		}
		out = append(out, culpritFromDelta(c, diff.Unit, float64(c.Delta)/float64(max(diff.Growth, 1))))
	}
	return keepCulprits(out, 5)
}

// spread picks at most n refs evenly, always keeping the first and the last.
func spread(refs []session.ProfileRef, n int) []session.ProfileRef {
	if len(refs) <= n {
		return refs
	}
	out := make([]session.ProfileRef, 0, n)
	for i := range n {
		out = append(out, refs[i*(len(refs)-1)/(n-1)])
	}
	return out
}
