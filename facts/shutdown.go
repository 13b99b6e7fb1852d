package facts

import (
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// Shutdown is a service's graceful shutdown at the end of a session: it ends its goroutines
// (its server's Shutdown, its contexts cancelled, its channels closed) in its last seconds,
// and then goes away. Those seconds are not its goroutines coming back: the goroutines are
// judged up to At, and the fall is said. A shutdown is a fall from the count's highest by a
// quarter or more (shutdownFall) within shutdownSpan of the last reading, after which nothing
// was read while the session went on (shutdownGone, and shutdownGaps of the readings' usual
// gap): the service was gone. The lab's subscriber-flood, watched over pprof, ended so: its
// lab closes every channel as it stops (213,336 -> 333 goroutines in 3 s, nothing read in the
// session's last 19 s; 255,376 -> 144,847 in 3 s, nothing in its last 4 s), and its goroutine
// leak was judged "no leak" or "suspected" over the whole session.
type Shutdown struct {
	At       time.Time // the count's last high, where the shutdown began
	From, To float64   // the count then, and at its last reading
	Span     time.Duration
}

const (
	shutdownSpan = 10 * time.Second
	shutdownGone = 2 * time.Second
	shutdownGaps = 3
	// shutdownFall: the last reading holds no more than this share of the high.
	shutdownFall = 0.75
)

// shutdownOf is the session's shutdown, nil when its goroutine count shows none.
func shutdownOf(ev *evidence.Evidence) *Shutdown {
	pts := ev.Goroutines.Points
	n := len(pts)
	if n < 5 {
		return nil
	}
	last := pts[n-1]
	gap := last.T.Sub(pts[0].T) / time.Duration(n-1)
	if gone := ev.End.Sub(last.T); gone < shutdownGone || gone < shutdownGaps*gap {
		return nil
	}
	peak := 0
	for i, p := range pts {
		if p.V >= pts[peak].V {
			peak = i
		}
	}
	high := pts[peak]
	if peak == 0 || peak == n-1 || last.T.Sub(high.T) > shutdownSpan || last.V > shutdownFall*high.V {
		return nil
	}
	return &Shutdown{At: high.T, From: high.V, To: last.V, Span: last.T.Sub(high.T)}
}

// before are the points up to t (all of them when t is zero).
func before(pts []Point, t time.Time) []Point {
	if t.IsZero() {
		return pts
	}
	for i, p := range pts {
		if p.T.After(t) {
			return pts[:i]
		}
	}
	return pts
}
