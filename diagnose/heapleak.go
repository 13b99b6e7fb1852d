package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// What growth of the live heap's floor matters.
var leakLimits = limits{minAbs: 4 << 20, minRel: 0.10, minSpan: 15 * time.Second}

// heapLeak reports a live heap (what the GC found reachable) whose floor, the lows it returns
// to between bursts, grows for good. Resident memory growing while the live heap is flat is
// not a heap leak, so RSS is never used here.
func heapLeak(in *input) outcome {
	fs := in.f
	lr := &fs.LiveReadings
	s, what := &lr.Series, "heap the GC found reachable"
	if lr.InUse {
		what = "heap in use, whose lows after each GC are the live heap"
	}
	if s.Empty() {
		return cannot(KindHeapLeak, 0, "the live heap was never measured: %s", fs.Gaps[facts.GapLive])
	}
	if len(fs.Heaps) == 1 && s.Len() == 1 && s.Src == facts.SourceHeapProfile {
		return cannot(KindHeapLeak, 0, "one heap profile is a snapshot: it shows what the heap held then (its top retainers are listed), "+
			"not whether it grows; give two or more heap profiles taken minutes apart")
	}
	obs, pts := lr.Observed, lr.Floor
	g := judgeGrowth(pts, leakLimits, s.Res.Quantum)
	back := cameBack(&g, obs)
	var seen time.Time
	if s.Src == facts.SourceHeapProfile {
		seen = fs.LiveSeen
	}
	unseen := g.capUnseen(fs, obs, seen)
	var churn float64 // the turnover of the sites that grew, when the growth was in flight
	if g.conf == Confirmed && s.Src == facts.SourceHeapProfile {
		if hg := fs.Growth; hg != nil {
			if share, tv := inFlightShare(hg); share >= inFlightMajority {
				g.conf, g.watchMore, churn = Suspected, max(g.watchMore, g.span), tv
			}
		}
	}
	if g.conf != Confirmed && s.Src != facts.SourceGCTrace && lr.GoalOK {
		// Sparse or noisy live readings: the GC's goal, read with every sample, follows the
		// live heap too.
		gobs, gpts := lr.GoalObserved, lr.GoalFloor
		gg := judgeGrowth(gpts, leakLimits, 0)
		cameBack(&gg, gobs)
		gunseen := gg.capUnseen(fs, gobs, time.Time{})
		// The live heap's own readings, enough of them, saw no growth: the goal's lows,
		// lifted by bursts the GC ran inside, are not proof against them. Those readings
		// are its lows between bursts, or all of them when the bursts left too few.
		own := g
		if own.n < minConfirmPoints {
			own = judgeGrowth(obs, leakLimits, s.Res.Quantum)
		}
		if gg.conf == Confirmed && own.judged && own.conf == "" && own.n >= minConfirmPoints {
			gg.conf, gg.watchMore = Suspected, max(gg.watchMore, gg.span/3)
		}
		if better(gg, g) {
			s, what, pts, g, unseen = &fs.HeapGoal, "live heap as the GC's goal follows it (goal = live x (1 + GOGC/100))", gpts, gg, gunseen
		}
	}
	if g.conf != Confirmed {
		if c, sg, spts, ok := siteLeak(fs.Growth, fs); ok && better(sg, g) {
			fd := siteLeakFinding(fs, c, sg, spts)
			in.leakCulprits(&fd)
			return found(fd)
		}
	}
	if !g.judged {
		// Count what the trend could use: readings that repeat one GC cycle's figure are one.
		return cannot(KindHeapLeak, g.watchMore, "%d distinct reading(s) of the live heap over %s (of %d taken): a trend needs 3 over %s or more",
			g.n, humanDuration(g.span.Seconds()), s.Len(), humanDuration(leakLimits.minSpan.Seconds()))
	}
	if g.conf == "" && back != nil {
		in.notef("heap-leak: the live heap's lows rose from %s, but it came back to %s at %s, in the window's last third: "+
			"what a leak holds stays live, so what rose was in flight (requests, bursts), not held", bytesStr(g.first), bytesStr(back.V), humanDuration(back.T.Sub(obs[0].T).Seconds()))
	}
	if g.conf == "" {
		// Say how slow a leak could be and still not show: below the effect that matters
		// over this window, growth is not told from a warm-up or the GC's noise.
		if g.span > 0 {
			in.limits = append(in.limits, DetectionLimit{Kind: KindHeapLeak, PerMinute: g.threshold / g.span.Seconds() * 60, Unit: "bytes"})
			in.notef("heap-leak: the live heap did not grow for good over %s; a leak slower than about %s/min would not show yet in a window this long",
				humanDuration(g.span.Seconds()), bytesStr(g.threshold/g.span.Seconds()*60))
		}
		return outcome{}
	}
	perMin := g.perMinute()
	f := Finding{
		Kind:             KindHeapLeak,
		Severity:         Warning,
		Confidence:       g.conf,
		WatchMoreSeconds: g.watchMore.Seconds(),
		Title:            fmt.Sprintf("the live heap grows %s/min and does not come back: %s -> %s", bytesStr(perMin), sizeStr(g.first, s.Res.Quantum), bytesStr(g.last)),
		Detail: fmt.Sprintf("The %s (%s) went from %s to %s over %s, judged on its lows between bursts: it rose consistently "+
			"(Kendall's tau %.2f, Mann-Kendall p=%.2g over %d lows) and is %s at the end. Memory that stays reachable keeps "+
			"growing: something adds to a map, slice, cache or buffer and never lets go.",
			what, s.Src, sizeStr(g.first, s.Res.Quantum), bytesStr(g.last), humanDuration(g.span.Seconds()), g.tau, g.p, g.n, risingWord(g)),
		Evidence: map[string]float64{
			"live_heap_start_bytes":   g.first,
			"live_heap_end_bytes":     g.last,
			"growth_bytes":            g.grew(),
			"growth_bytes_per_minute": perMin,
			"window_seconds":          g.span.Seconds(),
			"kendall_tau":             g.tau,
			"mann_kendall_p":          g.p,
			"late_slope_ratio":        g.lateRatio,
			"floor_points_count":      float64(g.n),
		},
		Start: pts[0].T, End: pts[len(pts)-1].T,
	}
	if g.conf == Suspected {
		f.Title = fmt.Sprintf("the live heap may be leaking: its floor rose %s -> %s", sizeStr(g.first, s.Res.Quantum), bytesStr(g.last))
		switch {
		case churn > 0:
			f.Detail += fmt.Sprintf(" Most of that growth is memory its sites allocated %.0f times over in the window: what they held at each "+
				"profile's GC was in flight (requests, buffers), and a few profiles of it that happen to rise are not yet a leak.", churn)
		case unseen > 0 && !seen.IsZero() && unseen == in.f.End.Sub(seen):
			f.Detail += fmt.Sprintf(" The last heap profile shows the heap as a GC found it about %s before the window's end: a heap profile "+
				"shows the GC before the last one, and profiles that repeat their predecessor show that GCs ran less often than profiles were taken. "+
				"Whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(unseen.Seconds()))
		case unseen > 0:
			f.Detail += fmt.Sprintf(" No GC measured the live heap in the last %s of the window: whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(unseen.Seconds()))
		}
		f.Detail += fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(g.watchMore.Seconds()))
	}
	timeToBudget(in.f, &f, perMin/60)
	in.leakCulprits(&f)
	f.Advice = append(f.Advice,
		"Bound what grows: a size or entry cap with eviction, a TTL shorter than what the growth can afford, or one global budget shared by all keys instead of an unbounded buffer per key.",
		"Check that entries are deleted from maps when their connection, request or session ends, and that goroutines holding references exit.")
	return found(f)
}

func risingWord(g growth) string {
	if g.lateRatio >= lateRising {
		return "still rising"
	}
	return "rising more slowly"
}

// timeToBudget adds when resident memory would reach the budget at this rate (RSS grows
// with the live heap, about twice as fast with GOGC=100 as the goal follows it; RSS's own
// trend when it has one).
func timeToBudget(fs *facts.Facts, f *Finding, liveSlope float64) {
	if fs.Budget == 0 || liveSlope <= 0 {
		return
	}
	slope, cur := 2*liveSlope, 2*f.Evidence["live_heap_end_bytes"]
	if !fs.RSS.Empty() {
		cur = fs.RSS.Last().V
		if g := judgeGrowth(fs.RSSFloor, limits{}, 0); g.judged && g.slope > 0 {
			slope = g.slope
		}
	}
	left := float64(fs.Budget) - cur
	f.Evidence["memory_budget_bytes"] = float64(fs.Budget)
	if left <= 0 {
		return
	}
	secs := left / slope
	f.Evidence["time_to_budget_seconds"] = secs
	f.Detail += fmt.Sprintf(" At this rate the process reaches its memory budget (%s) in about %s.", bytesStr(float64(fs.Budget)), humanDuration(secs))
	if secs < 3600 && f.Confidence == Confirmed {
		f.Severity = Critical
	}
}

// leakCulprits names the allocation sites whose retained memory (inuse_space) grew steadily
// across the periodic heap snapshots.
func (in *input) leakCulprits(f *Finding) {
	ls := &in.f.LeakSites
	if !ls.Pair {
		in.notef("heap-leak: no pair of heap profiles to name the growing allocation sites (%s)", in.f.Gaps[facts.GapHeapSnaps])
		return
	}
	if ls.Err != nil {
		in.notef("heap-leak: %v", ls.Err)
		return
	}
	f.Culprits = growingSites(ls)
	f.Profiles = []string{ls.Old.Path, ls.New.Path}
	f.Advice = append(f.Advice, "See what the growing objects are and who holds them: "+pprofDiffCommand("inuse_space", ls.Old, ls.New))
}

// growingSites ranks sites by how much their inuse_space grew, keeping those that rose
// across the snapshots (not a site that merely swings).
func growingSites(ls *facts.LeakSites) []Culprit {
	var out []Culprit
	for _, c := range ls.Sites {
		if s := c.Points; len(s) >= 4 {
			if tr := trend(s); tr.Z < 1 { // not rising across the snapshots: a swing, not growth
				continue
			}
		}
		out = append(out, culpritFromDelta(c.Delta, ls.Diff.Unit, float64(c.Delta.Delta)/float64(max(ls.Diff.Growth, 1))))
	}
	return keepCulprits(out, 5)
}

// cameBack withdraws a growth when the live heap came back near where the growth started
// (within a third of the growth) during the window's last third: whatever a leak holds stays
// live, and by then a leak has made two thirds of its growth, so no reading can fall that
// low. A heap whose lows seem to rise only because its GCs ran with more requests in flight
// (a loaded machine falls behind) still reaches its old low now and then. It returns that
// reading (nil when it did not).
func cameBack(g *growth, obs []facts.Point) *facts.Point {
	if g.conf == "" || len(obs) < 3 {
		return nil
	}
	t0 := obs[0].T
	late := t0.Add(obs[len(obs)-1].T.Sub(t0) * 2 / 3)
	var low *facts.Point
	for i := range obs {
		if !obs[i].T.Before(late) && (low == nil || obs[i].V < low.V) {
			low = &obs[i]
		}
	}
	if low == nil || low.V-g.first >= g.grew()/3 {
		return nil
	}
	g.conf, g.watchMore = "", 0
	return low
}
