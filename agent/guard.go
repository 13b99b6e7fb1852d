package agent

import (
	"encoding"
	"fmt"
	"sync"
	"time"
)

// PressureLevel says how close the service is to its memory budget.
type PressureLevel int

// The pressure levels.
const (
	PressureNormal   PressureLevel = iota // below the high threshold
	PressureHigh                          // at or above the high threshold (default 80%): shed optional work
	PressureCritical                      // at or above the critical threshold (default 95%): refuse work
)

var levelNames = [...]string{"normal", "high", "critical"}

func (l PressureLevel) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("PressureLevel(%d)", int(l))
}

// MarshalText encodes the level as its name.
func (l PressureLevel) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes a level name.
func (l *PressureLevel) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if string(b) == n {
			*l = PressureLevel(i)
			return nil
		}
	}
	return fmt.Errorf("unknown pressure level %q", b)
}

var (
	_ encoding.TextMarshaler   = PressureLevel(0)
	_ encoding.TextUnmarshaler = (*PressureLevel)(nil)
)

// Pressure is the guard's reading of memory use against the budget.
type Pressure struct {
	Level PressureLevel `json:"level"`
	Time  time.Time     `json:"time,omitzero"`
	// UsedBytes is the process's RSS (without /proc: the Go runtime's resident upper bound,
	// /memory/classes/total minus heap/released).
	UsedBytes   uint64  `json:"used_bytes"`
	BudgetBytes uint64  `json:"budget_bytes"` // 0 = no budget: the level stays normal
	Fraction    float64 `json:"fraction"`     // UsedBytes / BudgetBytes
}

// hysteresis is how far below a threshold (as a fraction of the budget) usage must fall for
// its level to be left.
const hysteresis = 0.05

// guard turns usage into pressure levels, delivers changes, and times the hard limit.
type guard struct {
	budget         uint64
	high, critical float64
	hard           float64 // fraction; 0 = no exit action
	hold           time.Duration

	mu        sync.Mutex
	cur       Pressure
	hardSince time.Time
	history   []Pressure // level changes, bounded
	c         chan Pressure
	notify    chan Pressure // to the callback goroutine; nil without a callback
}

const maxPressureHistory = 64

func newGuard(budget uint64, high, critical, hard float64, hold time.Duration, withCallback bool) *guard {
	g := &guard{budget: budget, high: high, critical: critical, hard: hard, hold: hold, c: make(chan Pressure, 1)}
	if withCallback {
		g.notify = make(chan Pressure, 1)
	}
	return g
}

// levelFor returns the level for fraction f, coming from level cur.
func (g *guard) levelFor(f float64, cur PressureLevel) PressureLevel {
	var raw PressureLevel
	switch {
	case f >= g.critical:
		raw = PressureCritical
	case f >= g.high:
		raw = PressureHigh
	}
	for raw < cur { // leave a level only well below its threshold
		th := g.high
		if cur == PressureCritical {
			th = g.critical
		}
		if f >= th-hysteresis {
			return cur
		}
		cur--
	}
	return raw
}

// update takes a usage reading. It reports how long usage has been at or above the hard limit
// (0 when it is not, or without an exit action).
func (g *guard) update(t time.Time, used uint64) (p Pressure, hardFor time.Duration) {
	if g.budget == 0 {
		return Pressure{Time: t, UsedBytes: used}, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f := float64(used) / float64(g.budget)
	prev := g.cur.Level
	g.cur = Pressure{Level: g.levelFor(f, prev), Time: t, UsedBytes: used, BudgetBytes: g.budget, Fraction: f}
	if g.cur.Level != prev || len(g.history) == 0 {
		if len(g.history) == maxPressureHistory {
			copy(g.history, g.history[1:])
			g.history = g.history[:maxPressureHistory-1]
		}
		g.history = append(g.history, g.cur)
		if g.cur.Level != prev {
			deliver(g.c, g.cur)
			if g.notify != nil {
				deliver(g.notify, g.cur)
			}
		}
	}
	if g.hard > 0 && f >= g.hard {
		if g.hardSince.IsZero() {
			g.hardSince = t
		}
		return g.cur, max(t.Sub(g.hardSince), time.Nanosecond)
	}
	g.hardSince = time.Time{}
	return g.cur, 0
}

// deliver puts p in a one-slot channel, replacing an undelivered older value: a reader always
// gets the latest level, and the sender never blocks.
func deliver(c chan Pressure, p Pressure) {
	for {
		select {
		case c <- p:
			return
		default:
		}
		select {
		case <-c:
		default:
		}
	}
}

func (g *guard) current() Pressure {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}

func (g *guard) historyCopy() []Pressure {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Pressure(nil), g.history...)
}
