package facts

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// TestShutdownOf: a fall of the goroutine count in its last seconds is a shutdown only when
// the service then went away (nothing read while the session went on).
func TestShutdownOf(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 4, 42, 0, 0, time.UTC)
	rise := func(n int, last ...float64) []evidence.Point {
		var pts []evidence.Point
		for i := range n {
			pts = append(pts, evidence.Point{T: t0.Add(time.Duration(i) * time.Second), V: 100000 + 2000*float64(i)})
		}
		for _, v := range last {
			pts = append(pts, evidence.Point{T: t0.Add(time.Duration(len(pts)) * time.Second), V: v})
		}
		return pts
	}
	// The fall, then 20 s more readings at the low level: a recovery, not a shutdown.
	recovered := rise(50, 1000)
	for i := range 20 {
		recovered = append(recovered, evidence.Point{T: recovered[len(recovered)-1].T.Add(time.Second), V: 1000 + float64(i)})
	}
	for _, tc := range []struct {
		name string
		pts  []evidence.Point
		gone time.Duration // from the last reading to the session's end
		want bool
	}{
		{"fell to nothing, then gone", rise(50, 150000, 333), 19 * time.Second, true},
		{"fell by 40%, then gone", rise(50, 160000, 118000), 4 * time.Second, true},
		{"fell, read to the end", rise(50, 150000, 333), time.Second, false},
		{"fell by a tenth, then gone", rise(50, 185000), 19 * time.Second, false},
		{"rising, then gone", rise(50), 19 * time.Second, false},
		{"fell, then read 20 s more, then gone", recovered, 19 * time.Second, false},
	} {
		ev := &evidence.Evidence{End: tc.pts[len(tc.pts)-1].T.Add(tc.gone)}
		ev.Goroutines.Points = tc.pts
		if got := shutdownOf(ev) != nil; got != tc.want {
			t.Errorf("%s: shutdown %v, want %v", tc.name, got, tc.want)
		}
	}
}
