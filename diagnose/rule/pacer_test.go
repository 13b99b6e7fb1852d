package rule

import (
	"math"
	"testing"
)

// TestPacerMatchesMeasurements checks the model against the measurements in
// runtime-memory-facts.md (L = 64 MiB, A = 500 MiB/s on Go 1.26).
func TestPacerMatchesMeasurements(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		p        pacer
		goalMiB  float64
		measured float64 // GC/s
	}{
		{"GOGC=100", pacer{live: 64 * mib, gogc: 100}, 128, 8.0},
		{"GOGC=50", pacer{live: 64 * mib, gogc: 50}, 96, 16.3},
		{"GOGC=400", pacer{live: 64 * mib, gogc: 400}, 320, 2.0},
		{"GOGC=100, GOMEMLIMIT=100MiB", pacer{live: 64 * mib, gogc: 100, limit: 100 * mib, nonHeap: 7 * mib}, 90, 21.3},
		{"GOGC=off, GOMEMLIMIT=100MiB", pacer{live: 64 * mib, gogc: -1, limit: 100 * mib, nonHeap: 7 * mib}, 90, 21.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goal := tc.p.goal() / mib
			if math.Abs(goal-tc.goalMiB) > 0.05*tc.goalMiB {
				t.Errorf("goal %.1f MiB, want about %.0f", goal, tc.goalMiB)
			}
			// The model's rate is a lower bound within the trigger's spread (45/64 to 61/64
			// of the room): the measured rate must lie between it and the upper bound.
			rate := tc.p.gcRate(500 * mib)
			if tc.measured < 0.95*rate || tc.measured > rate/0.70 {
				t.Errorf("model %.1f GC/s, measured %.1f is outside [model, model/0.70]", rate, tc.measured)
			}
		})
	}
}

func TestGOGCFor(t *testing.T) {
	const mib = 1 << 20
	p := pacer{live: 20 * mib, scan: 1 * mib}
	g := p.gogcFor(300 * mib)
	p.gogc = g
	if room := p.goal() - p.live; math.Abs(room-300*mib) > mib {
		t.Errorf("GOGC %.0f leaves %.1f MiB of room, want 300", g, room/mib)
	}
	// A tiny live heap: the 4 MiB x GOGC/100 floor decides.
	tiny := pacer{live: 0.5 * mib}
	tiny.gogc = tiny.gogcFor(64 * mib)
	if room := tiny.goal() - tiny.live; room > 64*mib+1 || room < 60*mib {
		t.Errorf("tiny heap: GOGC %.0f leaves %.1f MiB of room, want 64", tiny.gogc, room/mib)
	}
}
