package compare

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// grid cuts one session's window into equal intervals from its start (after the skipped
// start-up): only whole intervals count, and an interval in which the process restarted is
// left out (its counters and its heap start again from nothing).
type grid struct {
	start time.Time
	width time.Duration
	n     int
	drop  []bool
}

func newGrid(ev *evidence.Evidence, skip, width time.Duration) grid {
	g := grid{start: ev.Start.Add(skip), width: width}
	if width <= 0 || !ev.End.After(g.start) {
		return g
	}
	g.n = int(ev.End.Sub(g.start) / width)
	g.drop = make([]bool, g.n)
	for _, r := range ev.Restarts {
		if i := int(r.Sub(g.start) / width); r.After(g.start) && i < g.n {
			g.drop[i] = true
		}
	}
	return g
}

// bounds returns interval i's start and end.
func (g grid) bounds(i int) (time.Time, time.Time) {
	a := g.start.Add(time.Duration(i) * g.width)
	return a, a.Add(g.width)
}

// values measures f over every interval that is kept and measurable.
func (g grid) values(f func(a, b time.Time) (float64, bool)) []float64 {
	var out []float64
	for i := range g.n {
		if g.drop[i] {
			continue
		}
		if v, ok := f(g.bounds(i)); ok {
			out = append(out, v)
		}
	}
	return out
}

// rate is a cumulative counter's average increase per second over [a, b], and whether it
// can be measured there. gctrace counts every cycle as it happens, so its counters are exact
// between cycles for as long as the process was observed (no line then means no cycle); a
// sampled counter is measured between its first and last readings inside [a, b], which must
// span at least half of it.
func rate(ev *evidence.Evidence, s *evidence.Series, a, b time.Time) (float64, bool) {
	pts := s.Points
	if len(pts) == 0 || !b.After(a) {
		return 0, false
	}
	if s.Src == evidence.SourceGCTrace {
		if a.Before(pts[0].T) || b.After(observedUntil(ev, s)) {
			return 0, false
		}
		va, _ := s.At(a)
		vb, _ := s.At(b)
		return math.Max(0, vb.V-va.V) / b.Sub(a).Seconds(), true
	}
	in := s.Between(a, b)
	if len(in) < 2 {
		return 0, false
	}
	p1, p2 := in[0], in[len(in)-1]
	if span := p2.T.Sub(p1.T); span < b.Sub(a)/2 {
		return 0, false
	}
	return math.Max(0, p2.V-p1.V) / p2.T.Sub(p1.T).Seconds(), true
}

// roundSlack is how long a round may take after its snapshots' time stamp (the round's
// start): it fetches its profiles and then reads MemStats, so the target's allocations for
// it fall between the reading before the round and the round's own reading.
const roundSlack = time.Second

// The share of a span that the increments kept between rounds must cover: half of an
// interval; a quarter of a whole session (a round every 5 s on a target read every 2 s
// leaves out 2 s in 5).
const (
	intervalCover = 0.5
	wholeCover    = 0.25
)

// betweenRounds measures the metric's sampled counter, in session ev, as its average increase
// per second from the increments between consecutive readings, but those that end in a round
// (after a snapshot's time stamp, within roundSlack): what the program did, memdoctor's
// requests left out. The increments kept must cover at least cover of the span measured.
func (m metric) betweenRounds(ev *evidence.Evidence, cover float64) measure {
	rounds := roundStarts(ev)
	endsInRound := func(t time.Time) bool {
		i := sort.Search(len(rounds), func(i int) bool { return !rounds[i].Before(t) }) // first round at or after t
		return i > 0 && !t.After(rounds[i-1].Add(roundSlack))
	}
	return func(ev *evidence.Evidence, a, b time.Time) (float64, bool) {
		s := m.series(ev)
		if s.Src == evidence.SourceGCTrace {
			return 0, false
		}
		in := s.Between(a, b)
		var sum float64
		var span time.Duration
		for i := 1; i < len(in); i++ {
			p1, p2 := in[i-1], in[i]
			if !p2.T.After(p1.T) || p2.V < p1.V || endsInRound(p2.T) {
				continue
			}
			sum += p2.V - p1.V
			span += p2.T.Sub(p1.T)
		}
		if span <= 0 || span.Seconds() < cover*b.Sub(a).Seconds() {
			return 0, false
		}
		return sum / span.Seconds(), true
	}
}

// roundStarts are the time stamps of the session's heap, goroutine and goroutineleak
// snapshots, sorted: memdoctor's rounds.
func roundStarts(ev *evidence.Evidence) []time.Time {
	var out []time.Time
	for _, snaps := range [][]evidence.Snapshot{ev.Heaps, ev.GoroutineSnaps, ev.LeakSnaps} {
		for _, sn := range snaps {
			out = append(out, sn.T)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// hasSnapshots reports whether memdoctor took any profile during the session.
func hasSnapshots(ev *evidence.Evidence) bool {
	return len(ev.Heaps)+len(ev.GoroutineSnaps)+len(ev.LeakSnaps) > 0
}

// observedUntil is how long the process was observed: the last reading of s or of its
// resident memory, goroutines or heap, whichever is latest. A stopping process writes no
// gctrace line, and that must not read as a GC that stopped running.
func observedUntil(ev *evidence.Evidence, s *evidence.Series) time.Time {
	t := s.Last().T
	for _, o := range []*evidence.Series{&ev.RSS, &ev.Goroutines, &ev.HeapInUse} {
		if l := o.Last().T; l.After(t) {
			t = l
		}
	}
	return t
}

// extreme is the lowest (low) or highest reading of a gauge within [a, b), and whether it has
// one: an interval without its own reading has no value (carrying the last one over would
// count one reading twice).
func extreme(s *evidence.Series, a, b time.Time, low bool) (float64, bool) {
	pts := s.Between(a, b)
	if len(pts) > 0 && !pts[len(pts)-1].T.Before(b) {
		pts = pts[:len(pts)-1] // [a, b): the reading at b belongs to the next interval
	}
	if len(pts) == 0 {
		return 0, false
	}
	v := pts[0].V
	for _, p := range pts[1:] {
		if low {
			v = math.Min(v, p.V)
		} else {
			v = math.Max(v, p.V)
		}
	}
	return v, true
}
