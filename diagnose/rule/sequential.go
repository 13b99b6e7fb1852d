package rule

// The sequential test. A watch --until-confirmed diagnoses its session every few seconds and
// stops at the first confirmation, so a growth is judged again and again as its readings come
// in, and every look is one more chance for readings with no trend to look like one. A fixed
// level for each look (p <= 0.01 at every look, the rule before) adds those chances up: a
// trendless series looked at after every reading passes it at some look 4.4% of the time. The
// consistency a confirmed growth needs is instead a boundary over the number of readings,
// Mann-Kendall's p-value against a level that depends on n (Trend.Boundary), set so that a
// series whose readings have no trend (any order of them as likely as any other) crosses it
// at any of its looks, however many, at most Trend.FalseAlarm of the time
// (TestSequentialFalseAlarm checks it by simulation, looking after every reading). It needs no
// window: five readings that only rise cross it (their p-value is 1/120, the least five
// readings can give), whenever they come.
//
// The levels are applied by leaktest/trend's Level, which leaktest's judgement of a test's
// rounds shares (it looks after every round).

import (
	"math"

	trendstat "github.com/memdoctor/memdoctor/leaktest/trend"
)

// boundary is the level Mann-Kendall's one-sided p-value must reach, over n readings, for the
// rise to be consistent: 0 (never) below Trend.MinConfirmPoints readings, then
// Trend.Boundary's levels in turn, its last from there on.
func (tr *Trend) boundary(n int) float64 {
	return trendstat.Level(tr.Boundary, tr.MinConfirmPoints, n)
}

// crosses reports whether a rise over n readings, with Kendall's tau and Mann-Kendall's
// one-sided p-value p, is consistent at this look: tau at least Trend.ConfirmTau and p within
// the boundary.
func (tr *Trend) crosses(n int, tau, p float64) bool {
	return tau >= tr.ConfirmTau && p <= tr.boundary(n)
}

// boundaryZ is the one-sided normal quantile of the boundary's level over n readings, for
// estimating how many more readings a rise needs.
func (tr *Trend) boundaryZ(n int) float64 { return normalQuantile(1 - tr.boundary(n)) }

// normalQuantile is the standard normal's quantile function (Acklam's rational
// approximation refined by one Newton step: accurate to 1e-9 on (0, 1)).
func normalQuantile(q float64) float64 {
	if q <= 0 || q >= 1 {
		return 0
	}
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [5]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [4]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	var x float64
	switch {
	case q < 0.02425:
		r := math.Sqrt(-2 * math.Log(q))
		x = (((((c[0]*r+c[1])*r+c[2])*r+c[3])*r+c[4])*r + c[5]) / ((((d[0]*r+d[1])*r+d[2])*r+d[3])*r + 1)
	case q > 1-0.02425:
		r := math.Sqrt(-2 * math.Log(1-q))
		x = -(((((c[0]*r+c[1])*r+c[2])*r+c[3])*r+c[4])*r + c[5]) / ((((d[0]*r+d[1])*r+d[2])*r+d[3])*r + 1)
	default:
		r := q - 0.5
		s := r * r
		x = (((((a[0]*s+a[1])*s+a[2])*s+a[3])*s+a[4])*s + a[5]) * r / (((((b[0]*s+b[1])*s+b[2])*s+b[3])*s+b[4])*s + 1)
	}
	e := 0.5*math.Erfc(-x/math.Sqrt2) - q
	return x - e*math.Sqrt(2*math.Pi)*math.Exp(x*x/2)
}
