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
}

// State is what the policy needs to know of the last fetch.
type State struct {
	Last           time.Time // when the last fetch was made; zero before the first
	LastGoroutines int       // the goroutine count then; -1 = unknown
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
// and why.
func (p Policy) Due(s State, now time.Time, goroutines int) Reason {
	switch {
	case p.Every <= 0:
		return NotDue
	case s.Last.IsZero():
		return Start
	case now.Sub(s.Last) < p.MinGap:
		return NotDue
	case p.climbed(s.LastGoroutines, goroutines):
		return Climb
	case now.Sub(s.Last) >= p.Every:
		return Periodic
	}
	return NotDue
}

func (p Policy) climbed(last, now int) bool {
	if p.ClimbMin <= 0 || last < 0 || now < 0 {
		return false
	}
	return now-last >= p.ClimbMin && float64(now) >= float64(last)*(1+p.ClimbRatio)
}
