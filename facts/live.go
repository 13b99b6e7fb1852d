package facts

import (
	"math"
	"sort"
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
		between, l.InBurst = inBursts(l.Observed, &ev.GCCycles)
	}
	l.Floor = Floor(offBursts(between, spikes))
	if gobs, ok := goalLive(ev); ok {
		l.GoalObserved = Observed(settled(ev, gobs))
		gbetween, _ := inBursts(l.GoalObserved, &ev.GCCycles) // each goal is set by a GC: one inside a burst sets it high
		l.GoalFloor = Floor(offBursts(gbetween, spikes))
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
// leak's do. Such cycles come in clusters, far faster than the GC's usual pace, and their
// readings move by a burst's height within seconds; a server whose GC runs as often all along
// (requests in flight at every cycle) has no cluster, and a leak moves the heap by that much
// only over many cycles.
const (
	// burstGap is the half-width of the time around a reading in which its cycles are counted
	// and its neighbours compared.
	burstGap = 2 * time.Second
	// burstCycles and burstPace: a reading is inside a burst when at least burstCycles cycles
	// ran within burstGap of it, at burstPace times the GC's usual pace or more (the median
	// count of slices 2 x burstGap wide over the window), and a reading within burstGap of it
	// differs from it by a spike's height (spikeMinHeight, and spikeMinRatio of the readings'
	// tenth percentile).
	burstCycles = 3
	burstPace   = 2.5
)

// inBursts returns the readings of the live heap taken between allocation bursts, and how many
// were left out as taken inside one (see burstGap), by the GC cycles counted around each.
func inBursts(pts []Point, cycles *evidence.Series) ([]Point, int) {
	c := cycles.Points
	if len(pts) < 2 || len(c) < 2 {
		return pts, 0
	}
	usual := usualCycles(c)
	height := math.Max(spikeMinHeight, spikeMinRatio*Percentile(Values(pts), 10))
	out := make([]Point, 0, len(pts))
	for i, p := range pts {
		n := countAt(c, p.T.Add(burstGap)) - countAt(c, p.T.Add(-burstGap))
		if n >= burstCycles && n >= burstPace*usual && movesBy(pts, i, height) {
			continue
		}
		out = append(out, p)
	}
	return out, len(pts) - len(out)
}

// usualCycles is the median count of cycles in the slices 2 x burstGap wide that cut the
// counter's span.
func usualCycles(c []Point) float64 {
	var counts []float64
	for from := c[0].T; from.Before(c[len(c)-1].T); from = from.Add(2 * burstGap) {
		counts = append(counts, countAt(c, from.Add(2*burstGap))-countAt(c, from))
	}
	return Median(counts)
}

// movesBy reports whether a reading within burstGap of reading i differs from it by height.
func movesBy(pts []Point, i int, height float64) bool {
	for j := i - 1; j >= 0 && pts[i].T.Sub(pts[j].T) <= burstGap; j-- {
		if math.Abs(pts[i].V-pts[j].V) >= height {
			return true
		}
	}
	for j := i + 1; j < len(pts) && pts[j].T.Sub(pts[i].T) <= burstGap; j++ {
		if math.Abs(pts[i].V-pts[j].V) >= height {
			return true
		}
	}
	return false
}

// countAt is a counter's last reading at or before t (its first when none is).
func countAt(c []Point, t time.Time) float64 {
	i := sort.Search(len(c), func(i int) bool { return c[i].T.After(t) })
	if i == 0 {
		return c[0].V
	}
	return c[i-1].V
}
