package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// endUnseen is how long the window's end went unseen by every one of the series, when that
// is long: the latest of their last readings lies more than a quarter of the window, and more
// than twice the usual gap between the first series' readings, before the window's end (0
// otherwise). A source that stopped answering (a starved service's pprof or agent) leaves its
// series so; a rule that found no growth in what it saw must not call the rest healthy.
func endUnseen(f *facts.Facts, series ...*facts.Series) time.Duration {
	if f.End.IsZero() || len(series) == 0 || series[0].Len() < 2 {
		return 0
	}
	var last time.Time
	for _, s := range series {
		if !s.Empty() && s.Last().T.After(last) {
			last = s.Last().T
		}
	}
	usual := usualGap(series[0].Points)
	tail := f.End.Sub(last)
	if tail <= max(f.Window()/4, 2*usual) {
		return 0
	}
	return tail
}

// usualGap is the median time between consecutive readings (0 with fewer than two).
func usualGap(pts []facts.Point) time.Duration {
	if len(pts) < 2 {
		return 0
	}
	gaps := make([]float64, len(pts)-1)
	for i := range gaps {
		gaps[i] = pts[i+1].T.Sub(pts[i].T).Seconds()
	}
	return time.Duration(facts.Median(gaps) * float64(time.Second))
}
