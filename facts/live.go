package facts

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// LiveReadings is the live heap as the heap-leak rule judges it: its readings once the process
// settled (the repeats of one GC cycle's figure dropped, but for gctrace, which reads each
// cycle once), and their lows between bursts.
type LiveReadings struct {
	// Series is the live heap, else (MemStats, Prometheus) the heap in use (InUse), whose
	// floor right after each GC is the live heap.
	Series Series
	InUse  bool
	// Observed are the settled readings; Floor their lows between bursts. InBurst counts the
	// readings left out of Floor as taken inside an allocation burst (inBursts): when the GC
	// runs only inside the bursts, Floor may hold too few readings to judge.
	Observed, Floor []Point
	InBurst         int
	// Goal is the live heap as the GC's goal follows it (goalLive), read the same way, when
	// the goal was read often enough; GoalOK says whether it was.
	GoalObserved, GoalFloor []Point
	GoalOK                  bool
}

func liveOf(ev *evidence.Evidence, spikes []Spike) LiveReadings {
	l := LiveReadings{Series: ev.Live}
	if ev.Live.Empty() {
		l.Series, l.InUse = ev.HeapInUse, true
	}
	l.Observed = settled(ev, l.Series.Points)
	if l.Series.Src != evidence.SourceGCTrace { // gctrace reads each cycle once; samplers repeat it
		l.Observed = Observed(l.Observed)
	}
	between := l.Observed
	if !l.InUse && l.Series.Src != evidence.SourceHeapProfile {
		between, l.InBurst = inBursts(l.Observed)
	}
	l.Floor = Floor(offBursts(between, spikes))
	if gobs, ok := goalLive(ev); ok {
		l.GoalObserved = Observed(settled(ev, gobs))
		l.GoalFloor = Floor(offBursts(l.GoalObserved, spikes))
		l.GoalOK = true
	}
	return l
}

// goalLive is the live heap as the GC's goal shows it: each cycle sets goal = live + (live +
// stacks + globals) x GOGC/100, so goal / (1 + GOGC/100) follows the live heap (a little
// high by the scanned stacks and globals). GOGC is the target's when known, else the default
// of 100 (the trend, not the level, is what is judged). Goals a memory limit may have set are
// left out: they follow the limit, not the live heap; so is everything with GOGC off.
func goalLive(ev *evidence.Evidence) ([]Point, bool) {
	gogc := ev.Pacer.GOGC
	if gogc == 0 {
		gogc = 100
	}
	if gogc < 0 || ev.HeapGoal.Len() < 3 {
		return nil, false
	}
	f := 1 + gogc/100
	limit := ev.Pacer.GOMemLimit - ev.Pacer.NonHeap
	out := make([]Point, 0, ev.HeapGoal.Len())
	for _, p := range ev.HeapGoal.Points {
		if ev.Pacer.GOMemLimit > 0 && p.V >= 0.9*limit {
			continue
		}
		out = append(out, Point{T: p.T, V: p.V / f, Src: p.Src})
	}
	return out, len(out) >= 3
}

// offBursts drops the readings taken during the transient spikes: a floor is what the heap
// returns to between bursts, and a GC that ran inside one lifts its reading by the burst. A
// spike still in progress at the end counts only when an earlier one came back (the bursts
// recur): else it may be a leak's own rise. When too few readings would be left (fewer than
// three, or than half), the readings are kept as they are.
func offBursts(pts []Point, spikes []Spike) []Point {
	complete := false
	for _, s := range spikes {
		complete = complete || !s.InProgress
	}
	if !complete {
		return pts
	}
	out := make([]Point, 0, len(pts))
	for _, p := range pts {
		inside := false
		for _, s := range spikes {
			if !p.T.Before(s.Start) && (s.InProgress || !p.T.After(s.End)) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, p)
		}
	}
	if len(out) < 3 || 2*len(out) < len(pts) {
		return pts
	}
	return out
}

// A GC cycle that runs inside an allocation burst (a body read whole, an export rendered) is
// not a low of the heap: the burst's own allocation started it, it reads the burst half-way,
// and the cycles after it, a fraction of a second apart as the burst goes on, read more of it.
// When the program does little else, its GC runs only inside the bursts and never after one,
// and every reading holds part of a burst: taken for lows, they rise from burst to burst as a
// leak's do. Inside a burst, readings climb by a burst's height from one cycle to the next
// within seconds; a leak moves the heap by that much only over many cycles, and requests in
// flight at each cycle of a busy server swing it up and down without climbing from a reading
// above its low.
const (
	// burstGap: the readings compared are at most this far apart.
	burstGap = 2 * time.Second
	// burstLowMargin: a reading within this of the readings' low is a low, even when a burst
	// follows it (what a heap leak must add to matter: less is the GC's noise).
	burstLowMargin = 4 << 20
)

// inBursts returns the readings of the live heap taken between allocation bursts, and how many
// were left out as taken inside one: a reading a spike's height (spikeMinHeight, and
// spikeMinRatio of the readings' tenth percentile, their low) above the one before it, within
// burstGap (the climb's); or one above the low by burstLowMargin that the next reading,
// within burstGap, is a spike's height above (the burst's allocation started its cycle: the
// first of the climb). A reading that fell that far below the one before is the GC after a
// burst, a low; so is one at the low just before a burst.
func inBursts(pts []Point) ([]Point, int) {
	n := len(pts)
	if n < 2 {
		return pts, 0
	}
	low := Percentile(Values(pts), 10)
	height := math.Max(spikeMinHeight, spikeMinRatio*low)
	near := func(a, b int) bool { return pts[b].T.Sub(pts[a].T) <= burstGap }
	out := make([]Point, 0, n)
	for i, p := range pts {
		climbed := i > 0 && near(i-1, i) && p.V-pts[i-1].V >= height
		starts := i+1 < n && near(i, i+1) && p.V-low >= burstLowMargin && pts[i+1].V-p.V >= height
		if !climbed && !starts {
			out = append(out, p)
		}
	}
	return out, n - len(out)
}
