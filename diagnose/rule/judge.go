package rule

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// growth is the verdict on whether a series grows for good.
type growth struct {
	n           int
	span, step  time.Duration
	first, last float64 // observed: medians of the first and of the last few readings
	// firstT and lastT are the middle times of those few readings: the growth took place
	// between them.
	firstT, lastT time.Time
	slope         float64 // Theil-Sen, per second
	tau, p        float64
	lateRatio     float64 // the last third's slope over the whole window's
	lateShare     float64 // the share of the observed growth made in the window's second half
	snr           float64 // the growth over the readings' scatter around the trend
	threshold     float64 // the growth that matters
	conf          Confidence
	// watchMore is, when the series could not be judged or the growth is only suspected, how
	// much longer to watch.
	watchMore time.Duration
	// judged is false when the series was too short to say anything.
	judged bool
	// spun is true when the growth slowed at the end and was taken as rising all the same,
	// its goroutines spinning (witness.spins).
	spun bool
}

// perMinute is the observed growth per minute: from the first readings to the last.
func (g growth) perMinute() float64 {
	d := g.lastT.Sub(g.firstT).Seconds()
	if d <= 0 {
		d = g.span.Seconds()
	}
	if d <= 0 {
		return 0
	}
	return g.grew() / d * 60
}

// grew is the observed growth: never negative.
func (g growth) grew() float64 { return math.Max(0, g.last-g.first) }

// judgeGrowth judges a series (its floor, for quantities that swing) against the limits,
// with the trend's thresholds.
func judgeGrowth(pts []facts.Point, lim Limits, quantum float64, tr *Trend) growth {
	return judgeWitnessed(pts, lim, quantum, tr, witness{})
}

// witness is what a second source says of a goroutine count's rise (the zero value:
// nothing).
type witness struct {
	// census is a census of the goroutines of the one site, or the one start function, that
	// made the rise, which rose in every profile (censusRose); nil when none did.
	census []facts.Point
	// spins says the goroutines that made it spin (GoroutineLeak.SpinShare): a growth that
	// slows is then no warm-up levelling off but goroutines that take the CPU from the service
	// that makes them, slowing it and so their own growth, as they pile up.
	spins bool
}

// judgeWitnessed is judgeGrowth for a series whose rise a second witness saw too. A series
// that only ever rose is consistent, when a census witnessed it, whether or not its few
// readings cross the boundary; one whose other readings came and went around the rise
// (requests, connections) is consistent and stands clear of its scatter when the census, a
// count that only ever rose, crosses the boundary on its own.
func judgeWitnessed(pts []facts.Point, lim Limits, quantum float64, tr *Trend, w witness) growth {
	g := growth{n: len(pts)}
	if g.n >= 2 {
		g.span = pts[g.n-1].T.Sub(pts[0].T)
		g.step = g.span / time.Duration(g.n-1)
	}
	if g.n < 3 || g.span < lim.MinSpan {
		step := g.step
		if step <= 0 {
			step = 10 * time.Second
		}
		g.watchMore = max(lim.MinSpan-g.span, time.Duration(3-g.n)*step)
		return g
	}
	g.judged = true
	t := trend(pts)
	g.slope, g.tau, g.p = t.Slope, t.Tau, t.P
	// The ends are medians of a few readings (a quarter of a short series, a sixth of a long
	// one, at most 5), so that one odd reading at either end does not set the growth.
	k := min(max(g.n/6, min(3, g.n/4), 1), 5)
	g.first = facts.Median(facts.Values(pts[:k]))
	g.last = facts.Median(facts.Values(pts[g.n-k:]))
	g.firstT, g.lastT = pts[(k-1)/2].T, pts[g.n-k+(k-1)/2].T
	g.threshold = math.Max(lim.MinAbs, math.Max(lim.rel(g.first), 3*quantum))
	if g.slope <= 0 || g.tau < tr.SuspectTau {
		return g
	}
	g.lateRatio = lateRatio(pts, g.slope)
	g.lateShare = lateShare(pts, g.first, g.last)
	g.snr = g.grew() / scatter(pts, t, quantum)
	material := g.grew() >= g.threshold
	// Still rising: the late slope keeps up with the whole window's, and the second half made
	// a fair share of the observed growth (a warm-up whose jump came first has levelled off,
	// even when its slope, robust to that jump, reads the small creep after it).
	rising := g.lateRatio >= tr.LateRising && g.lateShare >= tr.MinLateShare
	slowing := !rising && g.lateRatio >= tr.LateSlowing && g.lateShare >= tr.LateSlowingShare
	if slowing && w.spins { // no warm-up: spinning goroutines slow the service that makes them
		rising, slowing, g.spun = true, false, true
	}
	// Consistent: the rise crosses the sequential boundary (sequential.go), which holds the
	// false-alarm rate however often the growth is judged as its readings come in.
	witnessed := len(w.census) > 0
	alone := false
	if witnessed && g.p <= tr.SuspectP {
		c := trend(w.census)
		alone = tr.crosses(len(w.census), c.Tau, c.P)
	}
	consistent := tr.crosses(g.n, g.tau, g.p) || witnessed && g.tau >= 1 || alone
	// Too few readings to cross the boundary at all (fewer than Trend.MinConfirmPoints), yet
	// as consistent as a suspicion needs: a growth still short of the effect that heads there
	// is suspected, and says how long to watch, as a material one is; not dismissed.
	early := g.n < tr.MinConfirmPoints && g.p <= tr.SuspectP
	// A series that only ever rose (every pair in order) needs no margin over its scatter:
	// readings taken at irregular times (a heap profile per GC, GCs further apart as the heap
	// grows) bend a steady leak away from a straight line without making it any less sure.
	strong := consistent && (g.snr >= tr.ConfirmSNR || g.tau >= 1 || alone)
	switch {
	case material && rising && strong:
		g.conf = Confirmed
	case material && (rising || slowing) && g.p <= tr.SuspectP:
		g.conf = Suspected
		g.watchMore = g.untilStrong(tr)
		if slowing { // a warm-up levels off: watch another third of the window to tell
			g.watchMore = max(g.watchMore, g.span/3)
		}
		if g.snr < tr.ConfirmSNR && g.slope > 0 { // until it stands clear of the scatter
			noise := g.grew() / math.Max(g.snr, 1e-9)
			g.watchMore = max(g.watchMore, time.Duration((tr.ConfirmSNR*noise-g.grew())/g.slope*float64(time.Second)))
		}
	case !material && rising && (consistent || early) && g.grew() >= tr.ProjectMinShare*g.threshold:
		// Consistent, but still small: confirmed when it is steady, past the effect's share
		// of the start and would reach its size soon (Trend.ProjectConfirm); else suspected
		// if it would matter soon.
		left := time.Duration((g.threshold - g.grew()) / g.slope * float64(time.Second))
		switch {
		case strong && g.grew() >= lim.rel(g.first) && left.Seconds() <= tr.ProjectConfirm*g.span.Seconds():
			g.conf = Confirmed
		case left <= max(tr.ProjectHorizon, g.span):
			g.conf = Suspected
			g.watchMore = left
			if !consistent {
				g.watchMore = max(left, g.untilStrong(tr))
			}
		}
	}
	return g
}

// capUnseen lowers a confirmed growth to a suspicion when its quantity was last measured long
// before the window's end: more than a quarter of the window, and more than twice the usual
// gap between its readings. The live heap is measured by a GC: when none ran for a while,
// whether it still grows is not known, and a warm-up that levelled off looks like a leak
// whose last readings are missing.
//
// seen, when not zero, is when the last reading was most likely measured, earlier than its
// own time: a heap profile shows an earlier GC's heap (facts.Facts.LiveSeen). The
// stretch after it went unseen too; it lowers the verdict when, besides, the growth went
// unseen for longer than it was seen: a steady rise seen for minutes is not put in doubt by
// the lag every heap profile has, a rise seen for half a minute and unseen for the next one
// is (a cache warming up looks just like it).
//
// It returns how long the end went unseen (0 when it did not lower the verdict).
func (g *growth) capUnseen(f *facts.Facts, obs []facts.Point, seen time.Time) time.Duration {
	return g.capUnseenOf(f, obs, seen, 0)
}

// capUnseenOf is capUnseen for a series of the live heap (toLive: what turns its values into
// the live heap's, 1 for the live heap and the goal's readings of it; 0 for a series the
// heap in use does not bound, as one site's): a growing heap makes the GC rarer by
// itself (under GOGC the next cycle waits for the heap to double), and the heap in use, read
// between cycles, bounds the live heap from above. When it was read up to the window's end
// and stands where the live heap would be had it kept growing at its rate, nothing says the
// growth stopped: the end is not taken as unseen. Below that, the growth slowed (a cache
// filling up does), and whether it goes on is not known.
func (g *growth) capUnseenOf(f *facts.Facts, obs []facts.Point, seen time.Time, toLive float64) time.Duration {
	if g.conf != Confirmed || len(obs) < 3 || f.End.IsZero() {
		return 0
	}
	if toLive > 0 && g.inUseKeepsUp(f, obs[len(obs)-1], toLive) {
		return 0
	}
	usual := usualGap(obs)
	long := func(tail time.Duration) bool { return tail > max(f.Window()/4, 2*usual) }
	tail := f.End.Sub(obs[len(obs)-1].T)
	if !long(tail) {
		if seen.IsZero() || !seen.Before(obs[len(obs)-1].T) {
			return 0
		}
		tail = f.End.Sub(seen)
		if !long(tail) || tail <= seen.Sub(obs[0].T) {
			return 0
		}
	}
	g.conf = Suspected
	g.watchMore = max(g.watchMore, tail)
	return tail
}

// inUseKeepsUp reports whether the heap in use, read after the live heap's last reading and
// up to the window's end, reached where the live heap would stand had it kept growing at the
// growth's rate since that reading (last, in the series' values; toLive turns them into the
// live heap's).
func (g *growth) inUseKeepsUp(f *facts.Facts, last facts.Point, toLive float64) bool {
	pts := f.HeapInUse.Points
	var after []facts.Point
	for _, p := range pts {
		if p.T.After(last.T) {
			after = append(after, p)
		}
	}
	if len(after) < 3 || g.slope <= 0 {
		return false
	}
	gaps := make([]float64, len(after)-1)
	for i := range gaps {
		gaps[i] = after[i+1].T.Sub(after[i].T).Seconds()
	}
	end := after[len(after)-1]
	if f.End.Sub(end.T).Seconds() > 2*math.Max(facts.Median(gaps), 1) { // the heap in use went unseen too
		return false
	}
	would := (last.V + g.slope*end.T.Sub(last.T).Seconds()) * toLive
	return end.V >= would
}

// untilStrong estimates how much longer the growth must be watched, at its present
// consistency and reading rate, for Mann-Kendall to cross the sequential boundary.
func (g growth) untilStrong(tr *Trend) time.Duration {
	if g.tau < tr.SuspectTau || g.step <= 0 {
		return 0
	}
	m := max(g.n, tr.MinConfirmPoints)
	for ; m < 100000; m++ {
		mf := float64(m)
		s := g.tau * mf * (mf - 1) / 2
		if (s-1)/math.Sqrt(mf*(mf-1)*(2*mf+5)/18) >= tr.boundaryZ(m) {
			break
		}
	}
	return time.Duration(m-g.n) * g.step
}

// Rise is a growth as the words layer tells it: where it went from and to, how fast, how
// consistently, over how many readings, and whether it is still rising at the end.
type Rise struct {
	First, Last    float64
	Grew           float64 // never negative
	PerMinute      float64
	Span           time.Duration
	Tau, P         float64
	N              int
	LateSlopeRatio float64
	// StillRising: the late slope keeps up with the whole window's (Trend.LateRising).
	StillRising bool
	// Confidence is the growth's own (a proof may confirm a verdict whose growth is only
	// suspected); WatchMore how much longer to watch a suspected growth.
	Confidence Confidence
	WatchMore  time.Duration
}

func (g growth) rise(tr *Trend) Rise {
	return Rise{
		First: g.first, Last: g.last, Grew: g.grew(), PerMinute: g.perMinute(), Span: g.span,
		Tau: g.tau, P: g.p, N: g.n, LateSlopeRatio: g.lateRatio, StillRising: g.lateRatio >= tr.LateRising,
		Confidence: g.conf, WatchMore: g.watchMore,
	}
}
