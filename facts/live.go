package facts

import (
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
	// Observed are the settled readings; Floor their lows between bursts.
	Observed, Floor []Point
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
	l.Floor = Floor(offBursts(l.Observed, spikes))
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
