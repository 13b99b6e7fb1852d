package leaktest

import (
	"math"

	"github.com/memdoctor/memdoctor/leaktest/trend"
)

// confidence is what the readings say of a growth so far.
type confidence int

const (
	clear     confidence = iota // no growth that counts, or one that has stopped
	suspected                   // a growth that may be a leak: more rounds will tell
	confirmed                   // a leak
)

// The thresholds of the judgement: memdoctor's diagnosis's (diagnose/rule's Default.Trend),
// so that a test and a running service are judged alike.
//
// A growth is judged again after every round, so the consistency it needs is a sequential
// boundary (boundary5 ... boundaryLater, through trend.Level): Mann-Kendall's p-value at most
// 1/120 over five readings, 6/720 over six, 27/5040 over seven, 0.005 from eight on, which a
// series with no trend crosses at some look at most 3.5% of the time however many rounds it
// gets.
const (
	confirmTau, confirmSNR          = 0.5, 4.0
	boundary5, boundary6, boundary7 = 1.0 / 120, 6.0 / 720, 27.0 / 5040
	boundaryLater                   = 0.005
	suspectP, suspectTau            = 0.2, 0.3
	minConfirmPoints                = 5
	lateRising, lateSlowing         = 0.5, 0.15
	minLateShare, lateSlowingShare  = 0.25, 0.05
	projectMinShare                 = 0.2
)

// boundary is the sequential boundary's levels from minConfirmPoints readings on.
var boundary = []float64{boundary5, boundary6, boundary7, boundaryLater}

// growth is the verdict on a series of readings against the calls made.
type growth struct {
	conf        confidence
	n           int
	first, last float64 // medians of the first and of the last few readings
	perCall     float64 // Theil-Sen's slope, per call
	tau, p      float64 // Kendall's tau, Mann-Kendall's one-sided p-value
	lateRatio   float64 // the last third's slope over the whole series'
	lateShare   float64 // the share of the growth made in the second half of the calls
	snr         float64 // the growth over the readings' scatter around the trend
	calls       int64   // the calls between the first reading and the last
	threshold   float64 // the growth that counts, over those calls
	// inFlight is, for a growth only suspected for it, the share made by memory in flight.
	inFlight float64
}

// grew is the observed growth: never negative.
func (g growth) grew() float64 { return math.Max(0, g.last-g.first) }

// judge says whether pts (values against calls) grows for good, as the diagnosis judges a
// series in time: the growth is large enough to count (minPerCall of it per call, and at
// least floor over the whole series), rises consistently (Kendall's tau and Mann-Kendall's
// test), stands clear of the readings' scatter, and still rises at the end (the last third's
// slope keeps up with the whole series', and the second half made a fair share of it): a
// cache that fills and stops, or a step at the start, is not a leak.
func judge(pts []trend.Point, minPerCall, floor float64) growth {
	g := growth{n: len(pts)}
	if g.n < 3 {
		return g
	}
	g.calls = pts[g.n-1].At - pts[0].At
	f := trend.Of(pts, 1)
	g.perCall, g.tau, g.p = f.Slope, f.Tau, f.P
	k := min(max(g.n/6, min(3, g.n/4), 1), 5)
	g.first = trend.Median(trend.Values(pts[:k]))
	g.last = trend.Median(trend.Values(pts[g.n-k:]))
	g.threshold = math.Max(floor, minPerCall*float64(g.calls))
	if g.perCall <= 0 || g.tau < suspectTau {
		return g
	}
	g.lateRatio = trend.LateRatio(pts, g.perCall, 1)
	g.lateShare = trend.LateShare(pts, g.first, g.last)
	g.snr = g.grew() / trend.Scatter(pts, f, 0, 1)
	material := g.grew() >= g.threshold
	rising := g.lateRatio >= lateRising && g.lateShare >= minLateShare
	slowing := !rising && g.lateRatio >= lateSlowing && g.lateShare >= lateSlowingShare
	consistent := g.tau >= confirmTau && g.p <= trend.Level(boundary, minConfirmPoints, g.n)
	strong := consistent && (g.snr >= confirmSNR || g.tau >= 1)
	switch {
	case material && rising && strong:
		g.conf = confirmed
	case material && (rising || slowing) && g.p <= suspectP:
		g.conf = suspected
	case !material && g.perCall >= minPerCall && rising && consistent && g.grew() >= projectMinShare*g.threshold:
		// Consistent, fast enough, still small in all: more calls will say whether it counts.
		g.conf = suspected
	}
	return g
}
