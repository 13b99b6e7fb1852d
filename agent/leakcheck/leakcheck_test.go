package leakcheck

import (
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	rec := Policy{Every: 2 * time.Minute, MinGap: 15 * time.Second, ClimbRatio: 0.2, ClimbMin: 50}
	after := func(d time.Duration, n int) State { return State{Last: t0.Add(-d), LastGoroutines: n} }
	for _, tc := range []struct {
		name string
		p    Policy
		s    State
		g    int
		want Reason
	}{
		{"first fetch", rec, State{}, 10, Start},
		{"first fetch, count unknown", rec, State{LastGoroutines: -1}, -1, Start},
		{"off", Policy{Every: 0, MinGap: time.Second, ClimbMin: 1}, State{}, 10, NotDue},
		{"off even on a climb", Policy{ClimbRatio: 0.2, ClimbMin: 50}, after(time.Hour, 100), 10000, NotDue},
		{"quiet, 1m after", rec, after(time.Minute, 100), 110, NotDue},
		{"quiet, 2m after", rec, after(2*time.Minute, 100), 110, Periodic},
		{"quiet, count unknown, 2m after", rec, after(2*time.Minute, -1), -1, Periodic},
		{"climb of 20% and 50", rec, after(20*time.Second, 250), 300, Climb},
		{"climb within the gap", rec, after(14*time.Second, 250), 5000, NotDue},
		{"climb just at the gap", rec, after(15*time.Second, 250), 300, Climb},
		{"50 more but under 20%", rec, after(30*time.Second, 1000), 1100, NotDue},
		{"20% more but under 50", rec, after(30*time.Second, 100), 140, NotDue},
		{"a drop", rec, after(30*time.Second, 1000), 10, NotDue},
		{"climb, the last count unknown", rec, after(30*time.Second, -1), 5000, NotDue},
		{"climb off", Policy{Every: time.Hour, MinGap: time.Second}, after(time.Minute, 10), 100000, NotDue},
		{"every shorter than the gap", Policy{Every: time.Second, MinGap: time.Minute}, after(30*time.Second, 1), 1, NotDue},
		{"every shorter than the gap, gap passed", Policy{Every: time.Second, MinGap: time.Minute}, after(time.Minute, 1), 1, Periodic},
	} {
		if got := tc.p.Due(tc.s, t0, tc.g); got != tc.want {
			t.Errorf("%s: Due(%+v, %d) = %q, want %q", tc.name, tc.s, tc.g, got, tc.want)
		}
	}
}

func TestDueAtPacesByCost(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	// The recorder's: a fetch on a 200 MiB heap costs about 0.2 s of a core; at 0.1% of a
	// core it may come every 200 s at most.
	p := Policy{Every: 2 * time.Minute, MinGap: 15 * time.Second, ClimbRatio: 0.2, ClimbMin: 50,
		CostShare: 0.001, MarkRate: 1 << 30, ManyGoroutines: 100000}
	big, small := float64(200<<20), float64(16<<20)
	start := func(n int) State { return State{LastGoroutines: n, Since: t0} }
	after := func(d time.Duration, n int) State {
		return State{Last: t0.Add(-d), LastGoroutines: n, Since: t0.Add(-time.Hour)}
	}
	for _, tc := range []struct {
		name string
		s    State
		now  time.Time
		g    int
		heap float64
		want Reason
	}{
		{"small heap: at once", start(10000), t0, 10000, small, Start},
		{"heap unknown: at once", start(10000), t0, 10000, 0, Start},
		{"big heap, idle: not at the start", start(10000), t0, 10000, big, NotDue},
		{"big heap, idle, 35 s in", start(10000), t0.Add(35 * time.Second), 10050, big, NotDue},
		{"big heap, climbing", start(10000), t0.Add(10 * time.Second), 12500, big, Climb},
		{"big heap, many", start(150000), t0, 150000, big, Start},
		{"big heap, 2 min in", start(10000), t0.Add(2 * time.Minute), 10000, big, NotDue},
		{"big heap, 200 s in", start(10000), t0.Add(201 * time.Second), 10000, big, Periodic},
		{"big heap, 2 min after a fetch", after(2*time.Minute, 10000), t0, 10000, big, NotDue},
		{"big heap, 4 min after a fetch", after(4*time.Minute, 10000), t0, 10000, big, Periodic},
		{"small heap, 2 min after a fetch", after(2*time.Minute, 100), t0, 100, small, Periodic},
		{"big heap, a climb after a fetch", after(30*time.Second, 10000), t0, 12500, big, Climb},
	} {
		if got := p.DueAt(tc.s, tc.now, tc.g, tc.heap); got != tc.want {
			t.Errorf("%s: DueAt = %q, want %q", tc.name, got, tc.want)
		}
	}
}
