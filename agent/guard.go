package agent

import (
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/wire"
)

// PressureLevel is how close the process is to its memory budget.
type PressureLevel = wire.PressureLevel

// The pressure levels.
const (
	PressureNormal   = wire.PressureNormal   // below the high threshold
	PressureHigh     = wire.PressureHigh     // at or above the high threshold (default 80%): shed optional work
	PressureCritical = wire.PressureCritical // at or above the critical threshold (default 95%): refuse work
)

// Pressure is the process's memory use against its budget, and the level it puts it at.
type Pressure = wire.Pressure

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
