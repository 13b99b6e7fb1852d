// Package leakcheck decides when to fetch the goroutineleak profile (Go 1.27; Go 1.26 built
// with GOEXPERIMENT=goroutineleakprofile). Each fetch costs the target a full GC cycle with
// leak detection, whose cost grows with the number of goroutines, so it is taken sparingly:
// once at the start, again when the goroutine count has climbed since the last one, and
// otherwise at a long period, never twice within a minimum gap. The recorder (over pprof)
// and the agent (in process) share this policy with their own settings.
package leakcheck

import "time"

// Policy says when a goroutineleak profile is due.
type Policy struct {
	// Every is the longest time between two fetches: one is due once this long has passed
	// since the last. 0 (or less) turns fetching off altogether.
	Every time.Duration
	// MinGap is the shortest time between two fetches, whatever the goroutine count does.
	MinGap time.Duration
	// A climb makes a fetch due before Every has passed: the goroutine count is at least
	// ClimbMin more than at the last fetch, and at least ClimbRatio above it (0.2 = 20%).
	// ClimbMin 0 (or less) turns the climb off.
	ClimbRatio float64
	ClimbMin   int
	// CostShare bounds what the fetches cost the target on average, as a share of one core
	// (0 = no bound). Each fetch is a full GC of the live heap with leak detection, estimated
	// at the live heap over MarkRate CPU-seconds: on a large heap the periodic fetch waits
	// until that cost is at most CostShare of the time since the last one (and at least
	// Every), and the first is made at once only when it is that cheap over Every, or when
	// the goroutines are many (ManyGoroutines or more) or climb (ClimbMin and ClimbRatio
	// since the count first read); else it waits as a periodic one does, from Since.
	CostShare      float64
	MarkRate       float64 // bytes of live heap a core marks a second, for the estimate
	ManyGoroutines int
}

// State is what the policy needs to know of the last fetch.
type State struct {
	Last           time.Time // when the last fetch was made; zero before the first
	LastGoroutines int       // the goroutine count then (the first read, before the first fetch); -1 = unknown
	// Since is when the fetching began: before the first fetch, the periodic one is timed
	// from it.
	Since time.Time
}

// Reason says why a fetch is due ("" = it is not).
type Reason string

// The reasons a fetch is due.
const (
	NotDue   Reason = ""
	Start    Reason = "start"    // no fetch yet
	Climb    Reason = "climb"    // the goroutine count climbed since the last fetch
	Periodic Reason = "periodic" // Every has passed since the last fetch
)

// Due reports whether a fetch is due at now, given the goroutine count now (-1 = unknown),
// and why; the live heap is not known, so CostShare does not apply.
func (p Policy) Due(s State, now time.Time, goroutines int) Reason {
	return p.DueAt(s, now, goroutines, 0)
}

// DueAt is Due with the live heap (bytes; 0 = unknown), which paces the fetches by what
// their GC costs (CostShare).
func (p Policy) DueAt(s State, now time.Time, goroutines int, liveHeap float64) Reason {
	every := p.Every
	if c := p.cost(liveHeap); c > 0 {
		every = max(every, time.Duration(c/p.CostShare*float64(time.Second)))
	}
	switch {
	case p.Every <= 0:
		return NotDue
	case s.Last.IsZero() && every == p.Every:
		return Start
	case s.Last.IsZero() && p.ManyGoroutines > 0 && goroutines >= p.ManyGoroutines:
		return Start
	case s.Last.IsZero() && p.climbed(s.LastGoroutines, goroutines):
		return Climb
	case s.Last.IsZero():
		if !s.Since.IsZero() && now.Sub(s.Since) >= every {
			return Periodic
		}
		return NotDue
	case now.Sub(s.Last) < p.MinGap:
		return NotDue
	case p.climbed(s.LastGoroutines, goroutines):
		return Climb
	case now.Sub(s.Last) >= every:
		return Periodic
	}
	return NotDue
}

// cost is the CPU-seconds a fetch is estimated to cost a target with this live heap: 0 when
// the policy has no CostShare or the heap is unknown, or when a fetch costs less than
// CostShare of Every.
func (p Policy) cost(liveHeap float64) float64 {
	if p.CostShare <= 0 || p.MarkRate <= 0 || liveHeap <= 0 {
		return 0
	}
	c := liveHeap / p.MarkRate
	if c <= p.CostShare*p.Every.Seconds() {
		return 0
	}
	return c
}

func (p Policy) climbed(last, now int) bool {
	if p.ClimbMin <= 0 || last < 0 || now < 0 {
		return false
	}
	return now-last >= p.ClimbMin && float64(now) >= float64(last)*(1+p.ClimbRatio)
}
