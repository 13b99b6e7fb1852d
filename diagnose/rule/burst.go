package rule

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// BurstCase is a growth seen across profiles taken too close together for a trend (curl'd
// in a burst, seconds apart): no trend can be judged, but the first and the last compared
// name the site that grew. It is a suspicion, with how far apart to take the next ones.
type BurstCase struct {
	// Unit is "bytes" (heap-leak) or "goroutines" (goroutine-leak).
	Unit string
	// N profiles over Span; a trend needs Need, and readings Apart this far apart give it.
	N                 int
	Span, Need, Apart time.Duration
	// From and To are the first and last profiles' totals; Top the site that grew most, by
	// Grew, or the function the growing sites share (Top.Sites > 0) when none grew enough
	// alone.
	From, To float64
	Top      Culprit
	Grew     float64
	// Largest is, when Top is the function the sites share or Doubled, the site that grew
	// most (Function "" when no site of the program's own code grew).
	Largest Culprit
	// Doubled is true when neither a site nor the function the sites share grew enough, but
	// the heap in use more than doubled through every profile.
	Doubled bool
	// State is, for goroutines, what the top site waits on.
	State    string
	Old, New string
	// Made, for a library's goroutines, the program's code that made them.
	Made *facts.Made
}

// minBurst is the fewest profiles of a kind that make a burst: two are a pair, taken apart
// on purpose, and compared as such (memdoctor diff).
const minBurst = 3

// apart is how far apart readings should be for the least confirmed trend over lim's span.
func apart(lim Limits, tr *Trend) time.Duration {
	return lim.MinSpan / time.Duration(max(tr.MinConfirmPoints-1, 1))
}

// heapBurst is a suspected heap leak from heap profiles taken too close together for a
// trend: the site whose in-use memory grew most from the first to the last, when it grew by
// what matters (HeapLeak.Limits, against the first's total); else the function the growing
// sites share, when what grew under it does; else, when the heap in use more than doubled
// through every profile, that growth, however many sites it is spread over.
func heapBurst(fs *facts.Facts, th *Thresholds, g growth) (Verdict, bool) {
	ls := &fs.LeakSites
	if !ls.Pair || ls.Err != nil || ls.Diff.Unit != "bytes" {
		return Verdict{}, false
	}
	lim := th.HeapLeak.Limits
	if len(fs.PeriodicHeaps) < minBurst || ls.New.T.Sub(ls.Old.T) >= lim.MinSpan { // not a burst: too few, or too few of its readings differ
		return Verdict{}, false
	}
	cs := growingSites(ls, &th.Culprits)
	c := &BurstCase{
		Unit: "bytes", N: len(fs.PeriodicHeaps), Span: ls.New.T.Sub(ls.Old.T), Need: lim.MinSpan, Apart: apart(lim, &th.Trend),
		From: float64(ls.Diff.OldTotal), To: float64(ls.Diff.NewTotal), Old: ls.Old.Path, New: ls.New.Path,
	}
	if len(cs) > 0 {
		c.Largest = cs[0]
	}
	floor := math.Max(lim.MinAbs, lim.MinRel*float64(ls.Diff.OldTotal))
	switch sh := ls.Shared; {
	case len(cs) > 0 && float64(cs[0].Bytes) >= floor:
		c.Top, c.Largest = cs[0], Culprit{}
	case sh != nil && float64(sh.Caller.Value) >= floor:
		c.Top = sharedCulprit(sh, ls.Diff.Growth)
		cs = sharedFirst(cs, c.Top, &th.Culprits)
	case doubled(ls.Totals, lim):
		c.Doubled = true
	default:
		return Verdict{}, false
	}
	c.Grew = float64(c.Top.Bytes)
	v := burstVerdict(KindHeapLeak, c, cs, g, ls.Old.T, ls.New.T)
	heldBy(fs, &v)
	return v, true
}

// goroutineBurst is a suspected goroutine leak from goroutine profiles taken too close
// together for a trend: when the count rose steadily by GoroutineLeak.Limits.MinAbs, the site
// whose goroutines grew most from the first profile to the last (several, for a library's
// connection and its loops).
func goroutineBurst(fs *facts.Facts, th *Thresholds, g growth) (Verdict, bool) {
	gr := &fs.Goroutine
	if !gr.GrowthPair || gr.GrowthErr != nil || len(gr.Growth) == 0 || fs.Goroutines.Empty() {
		return Verdict{}, false
	}
	lim := th.GoroutineLeak.Limits
	if fs.Goroutines.Len() < minBurst || gr.New.T.Sub(gr.Old.T) >= lim.MinSpan {
		return Verdict{}, false
	}
	top := gr.Growth[0]
	from, to := fs.Goroutines.First().V, fs.Goroutines.Last().V
	// Counts are exact: a rise of MinAbs goroutines that every profile of the burst saw go up
	// is a pile-up in the making, whatever the total (the share that matters for a trend is
	// for the window a trend needs, not for seconds of it).
	if to-from < lim.MinAbs || fs.Goroutines.Len() >= 3 && trend(fs.Goroutines.Points).Tau < th.Trend.ConfirmTau {
		return Verdict{}, false
	}
	var v Verdict
	var o outcome
	blameGoroutines(fs, &v, false, &th.Culprits, &o)
	if gr.Made != nil {
		v.Culprits = keepCulprits(append(makers(gr.Made), v.Culprits...), &th.Culprits)
	}
	c := &BurstCase{
		Unit: "goroutines", N: fs.Goroutines.Len(), Span: gr.New.T.Sub(gr.Old.T), Need: lim.MinSpan, Apart: apart(lim, &th.Trend),
		From: from, To: to, Grew: float64(top.Delta), State: WaitState(top.Site.GoroutineGroup),
		Top: Culprit{Function: top.Site.Blocking, Count: int64(top.Delta), Own: top.Site.Culprit.Own},
		Old: gr.Old.Path, New: gr.New.Path, Made: gr.Made,
	}
	if top.Site.Culprit.Own {
		c.Top.Function, c.Top.File, c.Top.Line = top.Site.Culprit.Function, top.Site.Culprit.File, top.Site.Culprit.Line
	}
	return burstVerdict(KindGoroutineLeak, c, v.Culprits, g, gr.Old.T, gr.New.T), true
}

func burstVerdict(kind Kind, c *BurstCase, culprits []Culprit, g growth, start, end time.Time) Verdict {
	return Verdict{
		Kind: kind, Severity: Info, Confidence: Suspected, Start: start, End: end,
		WatchMoreSeconds: math.Max(g.watchMore.Seconds(), (c.Need - c.Span).Seconds()),
		Culprits:         culprits, Profiles: []string{c.Old, c.New}, Case: c,
	}
}
