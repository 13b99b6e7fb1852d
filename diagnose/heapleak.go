package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func init() { register(KindHeapLeak, heapLeak) }

// What growth of the live heap's floor matters.
var leakLimits = limits{minAbs: 4 << 20, minRel: 0.10, minSpan: 15 * time.Second}

// heapLeak reports a live heap (what the GC found reachable) whose floor, the lows it returns
// to between bursts, grows for good. Resident memory growing while the live heap is flat is
// not a heap leak, so RSS is never used here.
func heapLeak(in *input) outcome {
	ev := in.ev
	s, what := liveSeries(ev)
	if s.Empty() {
		return cannot(KindHeapLeak, 0, "the live heap was never measured: %s", ev.Gaps[evidence.GapLive])
	}
	if _, one := singleSnapshot(ev.Heaps); one && s.Len() == 1 && s.Src == evidence.SourceHeapProfile {
		return cannot(KindHeapLeak, 0, "one heap profile is a snapshot: it shows what the heap held then (its top retainers are listed), "+
			"not whether it grows; give two or more heap profiles taken minutes apart")
	}
	obs := settled(ev, s.Points)
	if s.Src != evidence.SourceGCTrace { // gctrace reads each cycle once; samplers repeat it
		obs = observed(obs)
	}
	pts := floor(offBursts(obs, in.spikes))
	g := judgeGrowth(pts, leakLimits, s.Res.Quantum)
	back := cameBack(&g, obs)
	var seen time.Time
	if s.Src == evidence.SourceHeapProfile {
		seen = ev.LiveSeen
	}
	unseen := g.capUnseen(ev, obs, seen)
	var churn float64 // the turnover of the sites that grew, when the growth was in flight
	if g.conf == Confirmed && s.Src == evidence.SourceHeapProfile {
		if hg := in.heapGrowth(); hg != nil {
			if share, tv := hg.inFlightShare(); share >= inFlightMajority {
				g.conf, g.watchMore, churn = Suspected, max(g.watchMore, g.span), tv
			}
		}
	}
	if g.conf != Confirmed && s.Src != evidence.SourceGCTrace {
		// Sparse or noisy live readings: the GC's goal, read with every sample, follows the
		// live heap too.
		if gobs, ok := goalLive(ev); ok {
			gobs = observed(settled(ev, gobs))
			gpts := floor(offBursts(gobs, in.spikes))
			gg := judgeGrowth(gpts, leakLimits, 0)
			cameBack(&gg, gobs)
			gunseen := gg.capUnseen(ev, gobs, time.Time{})
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
				s, what, pts, g, unseen = &ev.HeapGoal, "live heap as the GC's goal follows it (goal = live x (1 + GOGC/100))", gpts, gg, gunseen
			}
		}
	}
	if g.conf != Confirmed {
		if c, sg, spts, ok := siteLeak(ev, in.heapGrowth()); ok && better(sg, g) {
			f := siteLeakFinding(ev, c, sg, spts)
			in.leakCulprits(&f)
			return found(f)
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
		case unseen > 0 && !seen.IsZero() && unseen == ev.End.Sub(seen):
			f.Detail += fmt.Sprintf(" The last heap profile shows the heap as a GC found it about %s before the window's end: a heap profile "+
				"shows the GC before the last one, and profiles that repeat their predecessor show that GCs ran less often than profiles were taken. "+
				"Whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(unseen.Seconds()))
		case unseen > 0:
			f.Detail += fmt.Sprintf(" No GC measured the live heap in the last %s of the window: whether it still grows, or has levelled off (a cache warming up does), is not known.", humanDuration(unseen.Seconds()))
		}
		f.Detail += fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(g.watchMore.Seconds()))
	}
	timeToBudget(ev, &f, perMin/60)
	in.leakCulprits(&f)
	f.Advice = append(f.Advice,
		"Bound what grows: a size or entry cap with eviction, a TTL shorter than what the growth can afford, or one global budget shared by all keys instead of an unbounded buffer per key.",
		"Check that entries are deleted from maps when their connection, request or session ends, and that goroutines holding references exit.")
	return found(f)
}

// goalLive is the live heap as the GC's goal shows it: each cycle sets goal = live + (live +
// stacks + globals) x GOGC/100, so goal / (1 + GOGC/100) follows the live heap (a little
// high by the scanned stacks and globals). GOGC is the target's when known, else the default
// of 100 (the trend, not the level, is what is judged). Goals a memory limit may have set are
// left out: they follow the limit, not the live heap; so is everything with GOGC off.
func goalLive(ev *evidence.Evidence) ([]evidence.Point, bool) {
	gogc := ev.Pacer.GOGC
	if gogc == 0 {
		gogc = 100
	}
	if gogc < 0 || ev.HeapGoal.Len() < 3 {
		return nil, false
	}
	f := 1 + gogc/100
	limit := ev.Pacer.GOMemLimit - ev.Pacer.NonHeap
	out := make([]evidence.Point, 0, ev.HeapGoal.Len())
	for _, p := range ev.HeapGoal.Points {
		if ev.Pacer.GOMemLimit > 0 && p.V >= 0.9*limit {
			continue
		}
		out = append(out, evidence.Point{T: p.T, V: p.V / f, Src: p.Src})
	}
	return out, len(out) >= 3
}

// liveSeries is the live heap, else (MemStats, Prometheus) the heap in use, whose floor right
// after each GC is the live heap.
func liveSeries(ev *evidence.Evidence) (*evidence.Series, string) {
	if !ev.Live.Empty() {
		return &ev.Live, "heap the GC found reachable"
	}
	return &ev.HeapInUse, "heap in use, whose lows after each GC are the live heap"
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
func timeToBudget(ev *evidence.Evidence, f *Finding, liveSlope float64) {
	if ev.Budget == 0 || liveSlope <= 0 {
		return
	}
	slope, cur := 2*liveSlope, 2*f.Evidence["live_heap_end_bytes"]
	if !ev.RSS.Empty() {
		cur = ev.RSS.Last().V
		if g := judgeGrowth(floor(ev.RSS.Points), limits{}, 0); g.judged && g.slope > 0 {
			slope = g.slope
		}
	}
	left := float64(ev.Budget) - cur
	f.Evidence["memory_budget_bytes"] = float64(ev.Budget)
	if left <= 0 {
		return
	}
	secs := left / slope
	f.Evidence["time_to_budget_seconds"] = secs
	f.Detail += fmt.Sprintf(" At this rate the process reaches its memory budget (%s) in about %s.", bytesStr(float64(ev.Budget)), humanDuration(secs))
	if secs < 3600 && f.Confidence == Confirmed {
		f.Severity = Critical
	}
}

// leakCulprits names the allocation sites whose retained memory (inuse_space) grew steadily
// across the periodic heap snapshots.
func (in *input) leakCulprits(f *Finding) {
	ev := in.ev
	refs := ev.PeriodicHeaps()
	if len(refs) < 2 {
		in.notef("heap-leak: no pair of heap profiles to name the growing allocation sites (%s)", ev.Gaps[evidence.GapHeapSnaps])
		return
	}
	old, new := refs[0], refs[len(refs)-1]
	diff, err := ev.HeapDiff(old, new, "inuse_space")
	if err != nil {
		in.notef("heap-leak: %v", err)
		return
	}
	f.Culprits = growingSites(ev, diff, refs)
	f.Profiles = []string{old.Path, new.Path}
	f.Advice = append(f.Advice, "See what the growing objects are and who holds them: "+pprofDiffCommand("inuse_space", old, new))
}

// growingSites ranks sites by how much their inuse_space grew, keeping those that rose
// across the snapshots (not a site that merely swings).
func growingSites(ev *evidence.Evidence, diff *evidence.SiteDiff, refs []evidence.Snapshot) []Culprit {
	const maxCandidates, maxSnaps = 10, 8
	cands := topGrowing(diff, maxCandidates)
	series, _ := siteSeries(ev, settledSnaps(ev, refs), cands, maxSnaps) // a start-up's loading is not growth
	var out []Culprit
	for _, c := range cands {
		if s := series[c.Site.Function]; len(s) >= 4 {
			if tr := trend(s); tr.Z < 1 { // not rising across the snapshots: a swing, not growth
				continue
			}
		}
		out = append(out, culpritFromDelta(c, diff.Unit, float64(c.Delta)/float64(max(diff.Growth, 1))))
	}
	return keepCulprits(out, 5)
}

// topGrowing is the n sites whose value grew most.
func topGrowing(diff *evidence.SiteDiff, n int) []evidence.SiteDelta {
	var cands []evidence.SiteDelta
	for _, d := range diff.ByFunction {
		if d.Delta <= 0 || len(cands) == n {
			break
		}
		cands = append(cands, d)
	}
	return cands
}

// siteSeries reads each candidate site's inuse_space across at most maxSnaps snapshots
// spread over refs, and the heap profiles' totals.
func siteSeries(ev *evidence.Evidence, refs []evidence.Snapshot, cands []evidence.SiteDelta, maxSnaps int) (map[string][]evidence.Point, []evidence.Point) {
	series := make(map[string][]evidence.Point, len(cands))
	var totals []evidence.Point
	for _, ref := range spread(refs, maxSnaps) {
		tab, err := ev.HeapSites(ref, "inuse_space")
		if err != nil {
			continue // named in the notes
		}
		totals = append(totals, evidence.Point{T: ref.T, V: float64(tab.Total)})
		byFn := make(map[string]int64, len(tab.ByFunction))
		for _, e := range tab.ByFunction {
			byFn[e.Site.Function] = e.Value
		}
		for _, c := range cands {
			series[c.Site.Function] = append(series[c.Site.Function], evidence.Point{T: ref.T, V: float64(byFn[c.Site.Function])})
		}
	}
	return series, totals
}

// spread picks at most n snapshots evenly, always keeping the first and the last.
func spread(refs []evidence.Snapshot, n int) []evidence.Snapshot {
	if len(refs) <= n {
		return refs
	}
	out := make([]evidence.Snapshot, 0, n)
	for i := range n {
		out = append(out, refs[i*(len(refs)-1)/(n-1)])
	}
	return out
}

// offBursts drops the readings taken during the transient spikes: a floor is what the heap
// returns to between bursts, and a GC that ran inside one lifts its reading by the burst. A
// spike still in progress at the end counts only when an earlier one came back (the bursts
// recur): else it may be a leak's own rise. When too few readings would be left (fewer than
// three, or than half), the readings are kept as they are.
func offBursts(pts []evidence.Point, spikes []Spike) []evidence.Point {
	complete := false
	for _, s := range spikes {
		complete = complete || !s.InProgress
	}
	if !complete {
		return pts
	}
	out := make([]evidence.Point, 0, len(pts))
	for _, p := range pts {
		inside := false
		for _, s := range spikes {
			if !p.T.Before(s.Start) && (s.InProgress || !p.T.After(s.End)) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	if len(out) < 3 || 2*len(out) < len(pts) {
		return pts
	}
	return out
}

// cameBack withdraws a growth when the live heap came back near where the growth started
// (within a third of the growth) during the window's last third: whatever a leak holds stays
// live, and by then a leak has made two thirds of its growth, so no reading can fall that
// low. A heap whose lows seem to rise only because its GCs ran with more requests in flight
// (a loaded machine falls behind) still reaches its old low now and then. It returns that
// reading (nil when it did not).
func cameBack(g *growth, obs []evidence.Point) *evidence.Point {
	if g.conf == "" || len(obs) < 3 {
		return nil
	}
	t0 := obs[0].T
	late := t0.Add(obs[len(obs)-1].T.Sub(t0) * 2 / 3)
	var low *evidence.Point
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
