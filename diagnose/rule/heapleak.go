package rule

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// LiveWhat says which reading of the live heap a heap-leak verdict was judged on.
type LiveWhat int

// The readings of the live heap.
const (
	LiveReachable LiveWhat = iota // what the GC found reachable
	LiveInUse                     // the heap in use, whose lows after each GC are the live heap
	LiveGoal                      // the GC's goal, which follows the live heap
)

// HeapLeakCase is a live heap whose floor grows for good.
type HeapLeakCase struct {
	Rise    Rise
	What    LiveWhat
	Src     facts.Source
	Quantum float64 // the readings' resolution (gctrace prints whole MiB)
	// Churn is, for a growth found in flight, the highest turnover of the sites that made it.
	Churn float64
	// Unseen is how long the window's end went unseen, when that made the growth a suspicion;
	// Lag is true when that was the heap profile's own lag.
	Unseen time.Duration
	Lag    bool
	Budget *BudgetTime
	Sites  LeakSitesSaid
	// HeldBy is set when the growth is what a goroutine leak's goroutines hold.
	HeldBy *Held
}

// SiteLeakCase is one allocation site whose retained memory grows for good though the live
// heap's total does not show it.
type SiteLeakCase struct {
	Site   Culprit
	Rise   Rise
	Budget *BudgetTime
	Sites  LeakSitesSaid
	HeldBy *Held
}

// BudgetTime is when resident memory reaches the budget at a growth's rate.
type BudgetTime struct {
	Bytes float64
	// Seconds until it is reached; 0 when it already is.
	Seconds float64
}

// LeakSitesSaid is what was said about the growing sites: named (Named), or why not.
type LeakSitesSaid struct {
	Named    bool
	Old, New string // the profiles compared, when named
}

// Held is a heap growth that a goroutine leak explains.
type Held struct {
	Bytes      float64 // what the heap grew
	Goroutines float64 // how many goroutines the leak added
}

// heapLeak reports a live heap (what the GC found reachable) whose floor, the lows it returns
// to between bursts, grows for good. Resident memory growing while the live heap is flat is
// not a heap leak, so RSS is never used here.
func heapLeak(fs *facts.Facts, th *Thresholds) outcome {
	tr, lim := &th.Trend, th.HeapLeak.Limits
	lr := &fs.LiveReadings
	s, what := &lr.Series, LiveReachable
	if lr.InUse {
		what = LiveInUse
	}
	if s.Empty() {
		return cannot(KindHeapLeak, WhyNeverMeasured, 0)
	}
	if len(fs.Heaps) == 1 && s.Len() == 1 && s.Src == facts.SourceHeapProfile {
		return cannot(KindHeapLeak, WhyOneSnapshot, 0)
	}
	obs, pts := lr.Observed, lr.Floor
	g := judgeGrowth(pts, lim, s.Res.Quantum, tr)
	back := cameBack(&g, obs)
	var seen time.Time
	if s.Src == facts.SourceHeapProfile {
		seen = fs.LiveSeen
	}
	unseen := g.capUnseenOf(fs, obs, seen, 1)
	var churn float64 // the turnover of the sites that grew, when the growth was in flight
	if g.conf == Confirmed && s.Src == facts.SourceHeapProfile && inFlightDoubt(g, obs, &th.HeapLeak) {
		if hg := fs.Growth; hg != nil {
			if share, tv := inFlightShare(hg, &th.HeapLeak); share >= th.HeapLeak.InFlightMajority {
				g.conf, g.watchMore, churn = Suspected, max(g.watchMore, g.span), tv
			}
		}
	}
	if g.conf != Confirmed && s.Src != facts.SourceGCTrace && lr.GoalOK {
		if gg, gpts, gunseen, ok := fromGoal(lr, g, s.Res.Quantum, fs, th); ok {
			s, what, pts, g, unseen = &fs.HeapGoal, LiveGoal, gpts, gg, gunseen
		}
	}
	if g.conf != Confirmed {
		if c, sg, spts, ok := siteLeak(fs, th); ok && better(sg, g) {
			return siteLeakVerdict(fs, th, c, sg, spts)
		}
	}
	if !g.judged {
		// Count what the trend could use: readings that repeat one GC cycle's figure are one.
		u := &Unjudged{Kind: KindHeapLeak, Why: WhyTooFew, WatchMoreSeconds: g.watchMore.Seconds(), N: g.n, Span: g.span, Need: lim.MinSpan, Value: float64(s.Len())}
		if lr.InBurst > 0 {
			u.Why, u.N, u.Value = WhyInBursts, lr.InBurst, float64(len(obs))
		}
		u.Waits = tooFewWait(fs, th, lr, g, u)
		// Profiles too close together for a trend still compare, first to last. The trend
		// that settles the suspicion is the live heap's: it waits on the same readings.
		if v, ok := heapBurst(fs, th, g); ok {
			v.Waits = u.Waits
			return outcome{verdicts: []Verdict{v}}
		}
		return outcome{unjudged: u}
	}
	var o outcome
	if g.conf == "" && back != nil {
		o.notes = append(o.notes, Note{Kind: KindHeapLeak, What: NoteCameBack, From: g.first, To: back.V, At: back.T.Sub(obs[0].T)})
	}
	if g.conf == "" {
		// The live heap is read at GCs: only when the heap in use went unseen too did the
		// source stop (a service idle between GCs still answers).
		if tail := endUnseen(fs, s, &fs.HeapInUse); tail > 0 {
			return outcome{unjudged: &Unjudged{Kind: KindHeapLeak, Why: WhyEndUnseen, N: s.Len(), Span: s.Span(), Value: tail.Seconds()}}
		}
		// Say how slow a leak could be and still not show: below the effect that matters
		// over this window, growth is not told from a warm-up or the GC's noise.
		if g.span > 0 {
			o.limits = append(o.limits, DetectionLimit{Kind: KindHeapLeak, PerMinute: g.threshold / g.span.Seconds() * 60, Unit: "bytes"})
			o.notes = append(o.notes, Note{Kind: KindHeapLeak, What: NoteDetectionLimit, Span: g.span, Rate: g.threshold / g.span.Seconds() * 60})
		}
		return o
	}
	perMin := g.perMinute()
	c := &HeapLeakCase{
		Rise: g.rise(tr), What: what, Src: s.Src, Quantum: s.Res.Quantum, Churn: churn, Unseen: unseen,
		Lag: unseen > 0 && !seen.IsZero() && unseen == fs.End.Sub(seen),
	}
	v := Verdict{
		Kind: KindHeapLeak, Severity: Warning, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(),
		Start: pts[0].T, End: pts[len(pts)-1].T, Case: c,
	}
	c.Budget = timeToBudget(fs, th, &v, perMin/60, g.last)
	c.Sites = leakCulprits(fs, th, &v, &o)
	heldBy(fs, &v)
	v.Waits = suspicionWait(fs, th, v.Confidence)
	o.verdicts = append(o.verdicts, v)
	return o
}

// suspicionWait is the wait of a suspected heap leak: each reading of the live heap that
// settles it is a GC cycle of the target's (nil for a confirmed one).
func suspicionWait(fs *facts.Facts, th *Thresholds, conf Confidence) *GCWait {
	if conf != Suspected {
		return nil
	}
	w := &GCWait{}
	if fs.GC.Every >= th.HeapLeak.SlowGC {
		w.Every = fs.GC.Every
	}
	return w
}

// tooFewWait is the wait of a live heap with too few readings to judge (u): the target's GC
// makes them, so when it runs seldom (HeapLeak.SlowGC) the wait is its cycles', and u's
// WatchMoreSeconds counts them. It waits (non-nil) when readings taken inside allocation
// bursts left too few between them (a GC between bursts settles whether the heap comes back),
// or when the heap in use climbed past the last reading by the growth that matters: whether
// that climb is garbage or kept memory is what the next reading tells. A heap that did not
// climb waits on nothing: a reading now would say what the last one said.
func tooFewWait(fs *facts.Facts, th *Thresholds, lr *facts.LiveReadings, g growth, u *Unjudged) *GCWait {
	lim := th.HeapLeak.Limits
	w := &GCWait{}
	if every := fs.GC.Every; every >= th.HeapLeak.SlowGC {
		w.Every = every
		need := 3 - len(lr.Floor)
		u.WatchMoreSeconds = max(lim.MinSpan-g.span, time.Duration(max(need, 1))*every).Seconds()
	}
	if lr.InBurst > 0 {
		return w
	}
	if lr.InUse || len(lr.Observed) == 0 || fs.HeapInUse.Empty() {
		return nil
	}
	last, inUse := lr.Observed[len(lr.Observed)-1], fs.HeapInUse.Last()
	if !inUse.T.After(last.T) || inUse.V-last.V < math.Max(lim.MinAbs, lim.MinRel*last.V) {
		return nil
	}
	return w
}

// fromGoal judges the live heap as the GC's goal follows it, read with every sample, for
// sparse or noisy live readings; ok when that is a stronger verdict than g, the live heap's
// own.
func fromGoal(lr *facts.LiveReadings, g growth, quantum float64, fs *facts.Facts, th *Thresholds) (growth, []facts.Point, time.Duration, bool) {
	tr, lim := &th.Trend, th.HeapLeak.Limits
	gobs, gpts := lr.GoalObserved, lr.GoalFloor
	gg := judgeGrowth(gpts, lim, 0, tr)
	cameBack(&gg, gobs)
	gunseen := gg.capUnseenOf(fs, gobs, time.Time{}, 1) // the goal's readings are the live heap it follows
	// The live heap's own readings, enough of them, saw no growth: the goal's lows, lifted by
	// bursts the GC ran inside, are not proof against them. Those readings are its lows
	// between bursts, or all of them when the bursts left too few.
	own := g
	if own.n < tr.MinConfirmPoints {
		own = judgeGrowth(lr.Observed, lim, quantum, tr)
	}
	if gg.conf == Confirmed && own.judged && own.conf == "" && own.n >= tr.MinConfirmPoints {
		gg.conf, gg.watchMore = Suspected, max(gg.watchMore, gg.span/3)
	}
	return gg, gpts, gunseen, better(gg, g)
}

// timeToBudget is when resident memory would reach the budget at this rate (RSS grows with
// the live heap, about twice as fast with GOGC=100 as the goal follows it; RSS's own trend
// when it has one; twice liveEnd when RSS is unknown): nil without a budget or a growth. A
// confirmed verdict that reaches it within HeapLeak.CriticalWithin is critical.
func timeToBudget(fs *facts.Facts, th *Thresholds, v *Verdict, liveSlope, liveEnd float64) *BudgetTime {
	if fs.Budget == 0 || liveSlope <= 0 {
		return nil
	}
	slope, cur := 2*liveSlope, 2*liveEnd
	if !fs.RSS.Empty() {
		cur = fs.RSS.Last().V
		if g := judgeGrowth(fs.RSSFloor, Limits{}, 0, &th.Trend); g.judged && g.slope > 0 {
			slope = g.slope
		}
	}
	b := &BudgetTime{Bytes: float64(fs.Budget)}
	left := b.Bytes - cur
	if left <= 0 {
		return b
	}
	b.Seconds = left / slope
	if b.Seconds < th.HeapLeak.CriticalWithin.Seconds() && v.Confidence == Confirmed {
		v.Severity = Critical
	}
	return b
}

// leakCulprits names the allocation sites whose retained memory (inuse_space) grew steadily
// across the periodic heap snapshots, or notes why it cannot.
func leakCulprits(fs *facts.Facts, th *Thresholds, v *Verdict, o *outcome) LeakSitesSaid {
	ls := &fs.LeakSites
	if !ls.Pair {
		o.notes = append(o.notes, Note{Kind: KindHeapLeak, What: NoteNoProfilePair})
		return LeakSitesSaid{}
	}
	if ls.Err != nil {
		o.notes = append(o.notes, Note{Kind: KindHeapLeak, What: NoteProfileError, Err: ls.Err})
		return LeakSitesSaid{}
	}
	v.Culprits = withShared(fs, withoutInFlight(growingSites(ls, &th.Culprits), inFlightBursts(fs)), &th.Culprits)
	v.Profiles = []string{ls.Old.Path, ls.New.Path}
	return LeakSitesSaid{Named: true, Old: ls.Old.Path, New: ls.New.Path}
}

// heldBy gives each culprit of a heap leak who keeps its objects alive, when memdoctor read
// the process's heap.
func heldBy(fs *facts.Facts, v *Verdict) {
	if !fs.Holders.Read() {
		return
	}
	for i := range v.Culprits {
		v.Culprits[i].HeldBy = fs.Holders.Of(v.Culprits[i].Function)
	}
}

// growingSites ranks sites by how much their inuse_space grew, keeping those that rose
// across the snapshots (not a site that merely swings).
func growingSites(ls *facts.LeakSites, th *Culprits) []Culprit {
	var out []Culprit
	for _, c := range ls.Sites {
		if s := c.Points; len(s) >= 4 {
			if t := trend(s); t.Z < 1 { // not rising across the snapshots: a swing, not growth
				continue
			}
		}
		out = append(out, culpritFromDelta(c.Delta, ls.Diff.Unit, float64(c.Delta.Delta)/float64(max(ls.Diff.Growth, 1))))
	}
	return keepCulprits(out, th)
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

// inFlightDoubt reports whether a growth is short enough to be in flight, were its sites'
// memory in flight: seen through fewer than HeapLeak.InFlightFadeReadings distinct readings
// (each a GC) and over less than HeapLeak.InFlightFadeSpan. Requests in flight pile up for
// as long as a server falls behind; memory that rose through every GC for longer, or through
// many more GCs, is kept, whatever its sites also allocate: a handler that keeps a little of
// every request allocates many times what it keeps.
func inFlightDoubt(g growth, obs []facts.Point, th *HeapLeak) bool {
	return len(obs) < th.InFlightFadeReadings && g.span < th.InFlightFadeSpan
}

// inFlight reports a site whose in-use memory is in flight (HeapLeak.InFlightTurnover).
func inFlight(hg *facts.HeapGrowth, site string, th *HeapLeak) bool {
	return hg.Turnover[site] >= th.InFlightTurnover
}

// inFlightShare is the share of the in-use growth that sites in flight made, and the highest
// turnover among them. Heap profiles read the live heap at one GC each: when the GC runs
// hundreds of times between them, each profile is a draw of whatever was in flight at one
// GC, and a few draws that happen to rise are not a leak.
func inFlightShare(hg *facts.HeapGrowth, th *HeapLeak) (share, turnover float64) {
	if hg.InUse.Growth <= 0 {
		return 0, 0
	}
	var held int64
	for _, d := range hg.InUse.ByFunction {
		if d.Delta > 0 && inFlight(hg, d.Site.Function, th) {
			held += d.Delta
			turnover = max(turnover, hg.Turnover[d.Site.Function])
		}
	}
	return float64(held) / float64(hg.InUse.Growth), turnover
}

// siteLeak judges, site by site, the memory each top growing allocation site retains across
// the periodic heap snapshots. A leak the live heap's total hides still shows in the site that
// holds it: when the GC runs only during bursts, every live-heap reading holds a burst's
// buffers; a cache shrinking beside a growing map cancels it out. The growth that matters is
// the live heap's (HeapLeak.Limits against the heap profiles' first total, less what bursts in
// flight held at it: restOfBursts). It returns the
// most confident growing site; ok is false when none grows. Sites whose memory is in flight
// are not followed. The function the growing sites share is judged as a site (shared.go).
func siteLeak(fs *facts.Facts, th *Thresholds) (c Culprit, g growth, pts []facts.Point, ok bool) {
	hg := fs.Growth
	if hg == nil || len(hg.Refs) < th.Trend.MinConfirmPoints || len(hg.Totals) == 0 {
		return Culprit{}, growth{}, nil, false
	}
	diff := hg.InUse
	bursts := inFlightBursts(fs)
	lim := th.HeapLeak.Limits
	lim.MinAbs = math.Max(lim.MinAbs, lim.MinRel*restOfBursts(hg.Totals[0], bursts))
	lim.MinRel = 0
	for _, site := range hg.Sites {
		d := site.Delta
		if inFlight(hg, d.Site.Function, &th.HeapLeak) || inFlightSite(bursts, d.Site.Function) {
			continue
		}
		s := site.Points
		sg := judgeGrowth(s, lim, 0, &th.Trend)
		sg.capUnseen(fs, s, fs.LiveSeen)
		if better(sg, g) {
			c, g, pts, ok = culpritFromDelta(d, diff.Unit, float64(d.Delta)/float64(max(diff.Growth, 1))), sg, s, sg.conf != ""
		}
	}
	if sh := hg.Shared; sh != nil && sh.Turnover < th.HeapLeak.InFlightTurnover {
		sg := judgeGrowth(sh.Points, lim, 0, &th.Trend)
		sg.capUnseen(fs, sh.Points, fs.LiveSeen)
		if better(sg, g) {
			c, g, pts, ok = sharedCulprit(sh, diff.Growth), sg, sh.Points, sg.conf != ""
		}
	}
	return c, g, pts, ok
}

// restOfBursts is a heap profile's in-use total (t) less what the bursts in flight held at
// it: the heap the bursts stand on. When the GC runs only inside the bursts, each profile
// holds one caught half-way or whole: taken as the heap whose tenth a leak must grow by, the
// first profile's total would ask twice as much growth of a leak when its GC ran at a burst's
// end as when it ran half-way through, and many times more than the heap it leaks from.
func restOfBursts(t facts.Point, bursts []*facts.InFlight) float64 {
	v := t.V
	for _, f := range bursts {
		for _, h := range f.Held {
			if h.T.Equal(t.T) {
				v -= h.V
				break
			}
		}
	}
	return math.Max(v, 0)
}

// siteLeakVerdict is the heap-leak verdict of a growing site whose growth the live heap's
// total did not show.
func siteLeakVerdict(fs *facts.Facts, th *Thresholds, site Culprit, g growth, pts []facts.Point) outcome {
	var o outcome
	c := &SiteLeakCase{Site: site, Rise: g.rise(&th.Trend)}
	v := Verdict{
		Kind: KindHeapLeak, Severity: Warning, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(),
		Start: pts[0].T, End: pts[len(pts)-1].T, Case: c,
	}
	c.Budget = timeToBudget(fs, th, &v, g.perMinute()/60, 0)
	c.Sites = leakCulprits(fs, th, &v, &o)
	v.Waits = suspicionWait(fs, th, v.Confidence)
	switch {
	case site.Sites > 0:
		v.Culprits = sharedFirst(v.Culprits, site, &th.Culprits)
	case site.Own:
		v.Culprits = ownFirst(v.Culprits, site)
		v.Culprits = v.Culprits[:min(len(v.Culprits), th.Culprits.Max)]
	}
	heldBy(fs, &v)
	o.verdicts = append(o.verdicts, v)
	return o
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
