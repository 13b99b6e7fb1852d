package agent

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPressureLevels(t *testing.T) {
	g := newGuard(1000, 0.80, 0.95, 0, 0, false)
	for i, tc := range []struct {
		used uint64
		want PressureLevel
	}{
		{500, PressureNormal},
		{799, PressureNormal},
		{800, PressureHigh},
		{940, PressureHigh},
		{951, PressureCritical},
		{910, PressureCritical}, // within 5% of the critical threshold: stays
		{899, PressureHigh},     // well below critical, still above high
		{760, PressureHigh},     // within 5% of high: stays
		{749, PressureNormal},
		{990, PressureCritical}, // straight up two levels
		{100, PressureNormal},   // straight down two
	} {
		p, _ := g.update(sec(i), tc.used)
		if p.Level != tc.want {
			t.Errorf("step %d: used %d -> %v, want %v", i, tc.used, p.Level, tc.want)
		}
		if p.BudgetBytes != 1000 || p.UsedBytes != tc.used || p.Fraction != float64(tc.used)/1000 {
			t.Errorf("step %d: %+v", i, p)
		}
	}
	// The history holds the first reading and every change.
	var levels []PressureLevel
	for _, p := range g.historyCopy() {
		levels = append(levels, p.Level)
	}
	want := []PressureLevel{PressureNormal, PressureHigh, PressureCritical, PressureHigh, PressureNormal, PressureCritical, PressureNormal}
	if len(levels) != len(want) {
		t.Fatalf("history %v, want %v", levels, want)
	}
	for i := range want {
		if levels[i] != want[i] {
			t.Fatalf("history %v, want %v", levels, want)
		}
	}
}

func TestPressureWithoutBudget(t *testing.T) {
	g := newGuard(0, 0.8, 0.95, 0.95, time.Second, false)
	p, hard := g.update(t0, 1<<40)
	if p.Level != PressureNormal || hard != 0 {
		t.Errorf("no budget: %+v, hard for %v", p, hard)
	}
	select {
	case p := <-g.c:
		t.Errorf("delivered %+v without a budget", p)
	default:
	}
}

// TestPressureChannelKeepsTheLatest: a reader that falls behind gets the latest level, and
// the guard never waits for it.
func TestPressureChannelKeepsTheLatest(t *testing.T) {
	g := newGuard(100, 0.5, 0.9, 0, 0, true)
	for i, used := range []uint64{10, 60, 95, 60, 95} { // four changes, none read
		g.update(sec(i), used)
	}
	select {
	case p := <-g.c:
		if p.Level != PressureCritical || !p.Time.Equal(sec(4)) {
			t.Errorf("read %+v, want the last change (critical at 4s)", p)
		}
	default:
		t.Fatal("nothing delivered")
	}
	select {
	case p := <-g.c:
		t.Errorf("a second value %+v was queued", p)
	default:
	}
	if p := <-g.notify; !p.Time.Equal(sec(4)) {
		t.Errorf("the callback channel has %+v", p)
	}
}

func TestHardLimitHold(t *testing.T) {
	g := newGuard(100, 0.8, 0.9, 0.9, 3*time.Second, false)
	var got []time.Duration
	for i, used := range []uint64{50, 95, 95, 99, 80, 92, 92} {
		_, h := g.update(sec(i), used)
		got = append(got, h)
	}
	want := []time.Duration{0, time.Nanosecond, time.Second, 2 * time.Second, 0, time.Nanosecond, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("held for %v, want %v", got, want)
		}
	}
}

func TestPressureLevelJSON(t *testing.T) {
	b, err := json.Marshal(Pressure{Level: PressureCritical})
	if err != nil {
		t.Fatal(err)
	}
	var p Pressure
	if err := json.Unmarshal(b, &p); err != nil || p.Level != PressureCritical {
		t.Errorf("round trip of %s: %+v, %v", b, p, err)
	}
	if err := p.Level.UnmarshalText([]byte("dire")); err == nil {
		t.Error("an unknown level name was accepted")
	}
	if PressureLevel(7).String() != "PressureLevel(7)" {
		t.Error(PressureLevel(7).String())
	}
}
