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
