package diagnose

import (
	"testing"
	"time"
)

func gcSeries(step time.Duration, lives ...float64) []gcPoint {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pts := make([]gcPoint, len(lives))
	t := t0
	for i, l := range lives {
		if l < 0 { // a quiet gap
			t = t.Add(6 * time.Second)
			l = -l
		}
		pts[i] = gcPoint{t, l * (1 << 20), 2 * l * (1 << 20)}
		t = t.Add(step)
	}
	return pts
}

func TestFindSpikes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pts   []gcPoint
		count int
	}{
		// Bursts separated by idle time: no GC between them, so the live heap only comes
		// back down at the next burst's first cycle (the shape of the json-whole lab).
		{"bursts with idle gaps", gcSeries(200*time.Millisecond, 7, 14, 26, 57, 63, 87, 121, 176, -60, 69, 90, 134, 131, -48, 68, 76, 108, 150, -11, 11, 19, 33), 3},
		// A steady service with bursts: GCs go on between them.
		{"bursts over steady traffic", gcSeries(500*time.Millisecond, 20, 21, 20, 22, 120, 180, 20, 21, 20, 150, 21, 20, 22, 20), 2},
		// A leak: the live heap never comes back.
		{"leak", gcSeries(2*time.Second, 1, 5, 9, 13, 17, 22, 28, -33, -41, -50, -60, -74, -89), 0},
		{"steady", gcSeries(100*time.Millisecond, 25, 26, 25, 27, 25, 26, 25, 24, 26, 25), 0},
		// A final rise that lasts to the end is not transient.
		{"rise at the end", gcSeries(time.Second, 10, 11, 10, 10, 11, 10, 90, 120, 150), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := findSpikes(tc.pts)
			if len(got) != tc.count {
				t.Errorf("%d spikes, want %d: %+v", len(got), tc.count, got)
			}
			for _, s := range got {
				if s.Height() < spikeMinHeight || s.End.Before(s.Start) || s.PeakHeap < s.PeakLive {
					t.Errorf("bad spike %+v", s)
				}
			}
		})
	}
}
