package facts

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func TestObserved(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var pts []Point
	for i, v := range []float64{5, 5, 5, 9, 9, 12, 12, 12, 5} {
		pts = append(pts, Point{T: t0.Add(time.Duration(i) * time.Second), V: v})
	}
	got := Observed(pts)
	want := []float64{5, 9, 12, 5}
	if len(got) != len(want) {
		t.Fatalf("observed %v, want %v", Values(got), want)
	}
	for i, p := range got {
		if p.V != want[i] || !p.T.Equal(pts[[]int{0, 3, 5, 8}[i]].T) {
			t.Errorf("point %d: %v at %v, want %v at the first reading of its run", i, p.V, p.T, want[i])
		}
	}
}

// The goal follows the live heap by 1 + GOGC/100; goals near a memory limit, and GOGC=off,
// say nothing about it.
func TestGoalLive(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	const mib = 1 << 20
	build := func(gogc, limit float64, goals ...float64) *evidence.Evidence {
		ev := &evidence.Evidence{Pacer: evidence.Pacer{GOGC: gogc, GOMemLimit: limit}}
		for i, g := range goals {
			ev.HeapGoal.Points = append(ev.HeapGoal.Points, Point{T: t0.Add(time.Duration(i) * time.Second), V: g * mib})
		}
		return ev
	}
	if pts, ok := goalLive(build(100, 0, 40, 50, 60)); !ok || pts[0].V != 20*mib || pts[2].V != 30*mib {
		t.Errorf("GOGC=100: %v %v, want half of each goal", ok, Values(pts))
	}
	if pts, ok := goalLive(build(300, 0, 40, 80, 120)); !ok || pts[1].V != 20*mib {
		t.Errorf("GOGC=300: %v %v, want a quarter", ok, Values(pts))
	}
	if pts, ok := goalLive(build(0, 0, 40, 50, 60)); !ok || pts[0].V != 20*mib {
		t.Errorf("GOGC unknown: %v %v, want the default of 100", ok, Values(pts))
	}
	if _, ok := goalLive(build(-1, 0, 40, 50, 60)); ok {
		t.Errorf("GOGC=off: the goal is the limit's, not the live heap's")
	}
	if pts, ok := goalLive(build(100, 100*mib, 40, 50, 60, 95, 96, 97)); !ok || len(pts) != 3 {
		t.Errorf("near a 100 MiB limit: %v %v, want the three goals below 90 MiB only", ok, Values(pts))
	}
}

// Bursts every twenty seconds over a flat floor, and the window ends inside one: the readings
// taken during the bursts are not the floor, so the end of the window inside a burst is no
// rise. Without a complete burst before it, a rise at the end is left to the leak rule.
func TestOffBursts(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var pts []Point
	for s := 0; s < 60; s++ {
		v := 12.0
		if s%20 >= 15 { // bursts at 15-19 s, 35-39 s, 55-59 s
			v = 50
		}
		pts = append(pts, Point{T: at(s), V: v})
	}
	spikes := []Spike{{Start: at(15), End: at(19)}, {Start: at(35), End: at(39)}, {Start: at(55), End: at(59), InProgress: true}}
	got := offBursts(pts, spikes)
	for _, p := range got {
		if p.V != 12 {
			t.Fatalf("a reading of a burst kept: %v", p)
		}
	}
	if len(got) != 45 {
		t.Errorf("%d readings kept, want the 45 between bursts", len(got))
	}
	for _, p := range Floor(got) {
		if p.V != 12 {
			t.Errorf("between the bursts the floor is flat, not %v at %v", p.V, p.T)
		}
	}
	if got := offBursts(pts, spikes[2:]); len(got) != len(pts) {
		t.Errorf("a lone rise at the end dropped %d readings", len(pts)-len(got))
	}
}
