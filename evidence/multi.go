package evidence

import (
	"slices"
	"time"
)

// multi keeps the readings of one quantity per source; the canonical series is one source's
// (see best: a series never mixes sources, their levels differ, as 1.26's /sched/goroutines
// counts system goroutines that NumGoroutine does not).
// It is indexed by source (a map lookup per reading cost a tenth of reading a long session);
// copies share the builders.
type multi struct{ by *[len(sourceNames)]*builder }

func newMulti() multi { return multi{by: new([len(sourceNames)]*builder)} }

// any reports whether any source gave a reading.
func (m multi) any() bool {
	for _, b := range m.by {
		if b != nil {
			return true
		}
	}
	return false
}

// get is the builder of src, nil when none; every source has a slot.
func (m multi) get(src Source) *builder {
	if int(src) >= len(m.by) {
		return nil
	}
	return m.by[src]
}

func (m multi) add(src Source, quantum float64, t time.Time, v float64) {
	b := m.get(src)
	if b == nil {
		b = newBuilder(src, quantum)
		m.by[src] = b
	}
	b.add(t, v)
}

func (m multi) addCounter(src Source, t time.Time, v float64) {
	b := m.get(src)
	if b == nil {
		b = newCounter(src)
		m.by[src] = b
	}
	b.add(t, v)
}

// put records a reading of the quantity d describes.
func (m multi) put(d *desc, src Source, t time.Time, v float64) {
	if d.counter {
		m.addCounter(src, t, v)
	} else {
		m.add(src, d.quantum(src), t, v)
	}
}

// best is the first of the quantity's sources (in its order of preference) with at least
// minBest readings (a series of per-cycle gctrace figures beats MemStats read every second:
// MemStats' GC CPU counts idle-time marking, and its readings repeat the last cycle's), else
// the source with the most readings. A source the quantity does not list (what a source of
// New set directly) comes after those it lists.
func (m multi) best(sources []Source) Series {
	var most *builder
	see := func(b *builder) bool {
		if b == nil {
			return false
		}
		if b.count() >= minBest {
			return true
		}
		if most == nil || b.count() > most.count() {
			most = b
		}
		return false
	}
	for _, src := range sources {
		if b := m.get(src); see(b) {
			return b.series()
		}
	}
	for src, b := range m.by {
		if !slices.Contains(sources, Source(src)) && see(b) {
			return b.series()
		}
	}
	return most.series()
}

// bestLed is best, led by the readings of the sources of lead that come before its first
// when its source is the process's memory (the same figure, read another way before memdoctor
// read the process's memory): a series of one figure, in time order.
func (m multi) bestLed(sources, lead []Source) Series {
	s := m.best(sources)
	if s.Src != SourceProcessMemory || s.Empty() || len(lead) == 0 {
		return s
	}
	first := s.Points[0].T
	var before []Point
	for _, src := range lead {
		l := m.get(src).series()
		for _, p := range l.Points {
			if p.T.Before(first) {
				before = append(before, p)
			}
		}
		if len(before) > 0 {
			break // one source leads
		}
	}
	if len(before) == 0 {
		return s
	}
	s.Points = append(before, s.Points...)
	return s
}

// minBest is how many readings make a source a series.
const minBest = 3

// countOf is the most readings any source of a quantity has.
func countOf(m multi) int {
	n := 0
	for _, b := range m.by {
		if b == nil {
			continue
		}
		n = max(n, b.count())
	}
	return n
}
