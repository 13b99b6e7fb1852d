package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
	trendstat "github.com/memdoctor/memdoctor/leaktest/trend"
)

// The growth statistics live in leaktest/trend, a standard-library leaf that the diagnosis
// and the leaktest module share; these adapt the diagnosis's series (readings in time) to it:
// positions in nanoseconds from the series' first reading, slopes per second.

// maxTrendPoints bounds the trend tests' O(n²) work: longer series are reduced to this many
// bucket medians first.
const maxTrendPoints = trendstat.MaxPoints

// fit is a robust estimate of how a series moves over time (slopes per second).
type fit = trendstat.Fit

// positions is pts as the trend package reads them: nanoseconds since the first reading.
func positions(pts []facts.Point) []trendstat.Point {
	out := make([]trendstat.Point, len(pts))
	for i, p := range pts {
		out[i] = trendstat.Point{At: int64(p.T.Sub(pts[0].T)), V: p.V}
	}
	return out
}

// trend fits a series with Theil-Sen and tests it with Mann-Kendall (trendstat.Of).
func trend(pts []facts.Point) fit { return trendstat.Of(positions(pts), int64(time.Second)) }

// lateShare is the share of the observed growth (first to last) made after the window's
// middle, from the reading nearest the middle (trendstat.LateShare).
func lateShare(pts []facts.Point, first, last float64) float64 {
	return trendstat.LateShare(positions(pts), first, last)
}

// lateRatio is the slope of the window's last third over the whole window's (trendstat.LateRatio).
func lateRatio(pts []facts.Point, slope float64) float64 {
	return trendstat.LateRatio(positions(pts), slope, int64(time.Second))
}

// scatter is the spread of the readings around the fitted trend, at least half the values'
// resolution (trendstat.Scatter).
func scatter(pts []facts.Point, tr fit, quantum float64) float64 {
	return trendstat.Scatter(positions(pts), tr, quantum, int64(time.Second))
}
