package facts

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// gcEvidence is evidence whose live heap is read at each GC (values in MiB; a negative value
// marks a quiet gap of 6 s before its reading).
func gcEvidence(step time.Duration, lives ...float64) *evidence.Evidence {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev := &evidence.Evidence{Start: t0}
	t := t0
	for _, l := range lives {
		if l < 0 { // a quiet gap
			t = t.Add(6 * time.Second)
			l = -l
		}
		ev.Live.Points = append(ev.Live.Points, evidence.Point{T: t, V: l * (1 << 20), Src: evidence.SourceGCTrace})
		ev.HeapAtGC.Points = append(ev.HeapAtGC.Points, evidence.Point{T: t, V: 2 * l * (1 << 20), Src: evidence.SourceGCTrace})
		t = t.Add(step)
	}
	ev.End = t
	return ev
}

func TestFindSpikes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ev         *evidence.Evidence
		count      int
		inProgress int
	}{
		// Bursts separated by idle time: no GC between them, so the live heap only comes
		// back down at the next burst's first cycle (the shape of the json-whole lab). The last
		// burst is still rising when the readings end: a spike in progress.
		{"bursts with idle gaps", gcEvidence(200*time.Millisecond, 7, 14, 26, 57, 63, 87, 121, 176, -60, 69, 90, 134, 131, -48, 68, 76, 108, 150, -11, 11, 19, 33), 4, 1},
		// A steady service with bursts: GCs go on between them.
		{"bursts over steady traffic", gcEvidence(500*time.Millisecond, 20, 21, 20, 22, 120, 180, 20, 21, 20, 150, 21, 20, 22, 20), 2, 0},
		// A leak: the live heap never comes back.
		{"leak", gcEvidence(2*time.Second, 1, 5, 9, 13, 17, 22, 28, -33, -41, -50, -60, -74, -89), 0, 0},
		{"steady", gcEvidence(100*time.Millisecond, 25, 26, 25, 27, 25, 26, 25, 24, 26, 25), 0, 0},
		// A final rise that lasts to the end: a spike in progress (or the start of a rise).
		{"rise at the end", gcEvidence(time.Second, 10, 11, 10, 10, 11, 10, 90, 120, 150), 1, 1},
		// High from the first reading: no floor was seen before it, so it is not a spike
		// (a start-up's first allocations are not a transient beside what follows).
		{"start-up", gcEvidence(500*time.Millisecond, 90, 120, 10, 11, 10, 12, 10, 11, 10), 0, 0},
		// ... unless the bursts recur: then the window opened inside one of them (readings ten
		// seconds apart, as heap profiles alone give them).
		{"opened inside a burst that recurs", gcEvidence(10*time.Second, 48, 61, 13, 12, 60), 2, 1},
		{"opened inside a burst that recurs and ends", gcEvidence(10*time.Second, 48, 61, 13, 12, 60, 12, 13), 2, 0},
		// A leak under bigger periodic spikes: the spikes are found over the rising floor.
		{"spikes over a leak", gcEvidence(time.Second, 10, 12, 180, 14, 16, 18, 200, 20, 22, 24, 210, 26, 28, 30), 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := spikesOf(tc.ev)
			inProgress := 0
			for _, s := range got {
				if s.InProgress {
					inProgress++
				}
				if s.Height() < spikeMinHeight || s.End.Before(s.Start) || s.PeakHeap < s.PeakLive || s.From.After(s.Start) {
					t.Errorf("bad spike %+v", s)
				}
			}
			if len(got) != tc.count || inProgress != tc.inProgress {
				t.Errorf("%d spikes (%d in progress), want %d (%d): %+v", len(got), inProgress, tc.count, tc.inProgress, got)
			}
		})
	}
}

// inUseEvidence is evidence with only heap in use (live plus garbage), read every step, as a
// source without the live heap has it (values in MiB).
func inUseEvidence(step time.Duration, gogc float64, inUse ...float64) *evidence.Evidence {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev := &evidence.Evidence{Start: t0, Pacer: evidence.Pacer{GOGC: gogc}}
	for i, v := range inUse {
		ev.HeapInUse.Points = append(ev.HeapInUse.Points, evidence.Point{T: t0.Add(time.Duration(i) * step), V: v * (1 << 20)})
	}
	ev.End = t0.Add(time.Duration(len(inUse)) * step)
	return ev
}

// Heap in use climbs from the live heap to the goal between cycles: that sawtooth is no
// spike, at the GOGC the service runs with; a burst far above the goal is.
func TestFindSpikesOnHeapInUse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ev    *evidence.Evidence
		count int
	}{
		{"sawtooth at GOGC=100", inUseEvidence(time.Second, 100, 40, 55, 70, 79, 41, 56, 72, 80, 40, 58, 71, 80, 42, 60, 78), 0},
		{"sawtooth at GOGC=300", inUseEvidence(time.Second, 300, 20, 45, 70, 79, 21, 50, 72, 80, 20, 58, 71, 80), 0},
		{"sawtooth, GOGC unknown", inUseEvidence(time.Second, 0, 40, 55, 70, 79, 41, 56, 72, 80, 40, 58, 71, 80), 0},
		{"a burst over the sawtooth", inUseEvidence(time.Second, 100, 40, 55, 70, 79, 41, 56, 260, 80, 40, 58, 71, 80, 42), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := spikesOf(tc.ev); len(got) != tc.count {
				t.Errorf("%d spikes, want %d: %+v", len(got), tc.count, got)
			}
		})
	}
}

// The GC runs seldom (three live readings in the window), but the heap in use is read every
// second: a burst made and freed between two cycles shows there as a rise far steeper than the
// heap's climb, freed by the next GC. A large allocation kept for good is no burst, nor is the
// GC's sawtooth.
func TestBurstsInTheHeapInUse(t *testing.T) {
	sawtooth := func(n int, from, climb float64, gcEvery int) []float64 {
		out := make([]float64, n)
		v := from
		for i := range out {
			if i > 0 && i%gcEvery == 0 {
				v = from
			}
			out[i] = v
			v += climb
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		inUse      []float64
		count      int
		inProgress int
	}{
		{"the GC's sawtooth", sawtooth(40, 100, 4, 12), 0, 0},
		{"a burst freed by the next GC", func() []float64 {
			v := sawtooth(40, 100, 4, 12)
			for i := 15; i < 24; i++ {
				v[i] += 150 // inflated at 15 s, freed at the GC at 24 s
			}
			return v
		}(), 1, 0},
		{"a burst still held as the window ends", func() []float64 {
			v := sawtooth(40, 100, 4, 12)
			for i := 38; i < 40; i++ {
				v[i] += 150
			}
			return v
		}(), 1, 1},
		{"a large allocation kept for good", func() []float64 {
			v := sawtooth(40, 100, 4, 12)
			for i := 15; i < 40; i++ {
				v[i] += 150
			}
			return v
		}(), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := inUseEvidence(time.Second, 100, tc.inUse...)
			for _, s := range []int{0, 12, 36} { // the GC's three readings of the live heap
				ev.Live.Points = append(ev.Live.Points, evidence.Point{T: ev.Start.Add(time.Duration(s) * time.Second), V: 100 << 20, Src: evidence.SourceGCTrace})
			}
			ev.Live.Src = evidence.SourceGCTrace
			got := spikesOf(ev)
			inProgress := 0
			for _, s := range got {
				if !s.InUse || s.Height() < 100<<20 {
					t.Errorf("spike %+v: want a burst of the heap in use of about 150 MiB", s)
				}
				if s.InProgress {
					inProgress++
				}
			}
			if len(got) != tc.count || inProgress != tc.inProgress {
				t.Errorf("%d spikes (%d in progress), want %d (%d): %+v", len(got), inProgress, tc.count, tc.inProgress, got)
			}
		})
	}
}

// spikesOf finds the spikes of an evidence, as Of does.
func spikesOf(ev *evidence.Evidence) []Spike { return findSpikes(ev, spikeSeriesOf(ev)) }
