package facts

import (
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// Spike is one transient rise of the live heap above its floor.
type Spike struct {
	Start, End time.Time
	// PeakLive is the highest live heap in the spike; Baseline the floor it rose from.
	PeakLive, Baseline float64
	// PeakHeap is the most heap in use (live plus garbage) seen in the spike, when known.
	PeakHeap float64
	// Readings is how many readings saw the live heap high.
	Readings int
	// InProgress is true when the window ended before the heap came back down.
	InProgress bool
	// InUse is true for a burst seen in the heap in use between GC cycles, not in the live
	// heap: Baseline is then the floor of the heap in use, PeakLive that floor plus the rise.
	InUse bool
	// Leading is true for a spike already up at the window's first reading: where it rose
	// from was not seen (it counts only when the bursts recur later in the window).
	Leading bool
	// InFlight is true for a burst a heap profile caught in flight at a GC (see InFlight):
	// Baseline is then the rest of the heap, PeakLive that plus what the burst's site held.
	InFlight bool
	// From and To bound when the spike happened: the last low reading before it and the
	// first low reading after it (To is the window's end for a spike in progress).
	From, To time.Time
}

// Height is how far the live heap rose above its floor.
func (s Spike) Height() float64 { return s.PeakLive - s.Baseline }

// Duration is how long readings saw the live heap high: from the first to the last of them
// (0 when one reading saw it; From and To bound the real duration).
func (s Spike) Duration() time.Duration { return s.End.Sub(s.Start) }

// Spike detection thresholds.
const (
	spikeMinHeight = 16 << 20 // bytes above the floor
	spikeMinRatio  = 0.5      // ... and at least this share of it
	// spikeReturn: after a spike the live heap must come back below the floor plus this share
	// of the spike's height, or it was not transient.
	spikeReturn = 0.5
	// spikeLookback: how far before a reading its floor is looked for (at least a few
	// readings' worth).
	spikeLookback = 10 * time.Second
)

// findSpikes finds the transient spikes of the live heap: runs of readings well above the
// floor they rose from (the lowest reading of the preceding lookback), ended by a reading
// back below the threshold or by a quiet gap (no GC: the burst's allocation stopped). A spike
// must rise from a floor seen before it (a start-up's first readings have none) and come back
// down, or still be up when the window ends (in progress). A rise that stays up while the
// window goes on is not transient: that is the leak rule's business.
func findSpikes(ev *evidence.Evidence, sd SpikeSeries) []Spike {
	pts, garbage := sd.Points, sd.Garbage
	n := len(pts)
	if n < 4 {
		return withBursts(ev, nil, max(sd.Step, ev.Window()))
	}
	step := sd.Step
	lookback := max(spikeLookback, 3*step)
	quietGap := max(2*time.Second, 5*step/2)
	global := Percentile(Values(pts), 10)
	base := make([]float64, n) // the floor before each reading
	for i := range pts {
		base[i] = localFloor(pts, i, lookback, global)
		if step >= sparseStep {
			base[i] = math.Max(math.Min(base[i], floorAfter(pts, i, lookback)), global)
		}
	}
	high := func(i int) bool {
		return pts[i].V > base[i]*(1+garbage)+math.Max(spikeMinHeight, spikeMinRatio*base[i])
	}
	// lowAfter[i] is the lowest live heap from reading i on: "does it come back?" in O(1).
	lowAfter := make([]float64, n+1)
	lowAfter[n] = math.Inf(1)
	for i := n - 1; i >= 0; i-- {
		lowAfter[i] = math.Min(lowAfter[i+1], pts[i].V)
	}
	var spikes []Spike
	seenLow := !high(0)
	for i := 1; i < n; i++ {
		gap := pts[i].T.Sub(pts[i-1].T) >= quietGap
		if !high(i) {
			seenLow = true
			continue
		}
		// A spike starts at a high reading after a low one, or after a quiet gap (a new burst),
		// once a low reading has been seen: the first readings of a start-up have no floor.
		if !seenLow || high(i-1) && !gap {
			continue
		}
		j := i
		for j+1 < n && high(j+1) && pts[j+1].T.Sub(pts[j].T) < quietGap {
			j++
		}
		sp := Spike{Start: pts[i].T, End: pts[j].T, Baseline: base[i], Readings: j - i + 1, From: pts[i-1].T}
		for _, p := range pts[i : j+1] {
			sp.PeakLive = math.Max(sp.PeakLive, p.V)
		}
		sp.PeakHeap = peakHeap(ev, sp.Start, sp.End, sp.PeakLive)
		i = j
		if h := sp.Height(); h < spikeMinHeight || h < spikeMinRatio*sp.Baseline {
			continue
		}
		switch {
		case j == n-1:
			sp.InProgress, sp.To = true, ev.End
		case lowAfter[j+1] <= sp.Baseline+spikeReturn*sp.Height():
			sp.To = pts[j+1].T
		default:
			continue // it stayed up: a step, not a spike
		}
		spikes = append(spikes, sp)
	}
	if len(spikes) > 0 && high(0) {
		if sp, ok := leadingSpike(ev, pts, high, lowAfter, base[0], quietGap); ok {
			spikes = append([]Spike{sp}, spikes...)
		}
	}
	return withBursts(ev, spikes, distinctStep(pts, ev.Window()))
}

// distinctStep is the mean time between readings that changed (a sampler reads the live heap
// again and again between two GC cycles); the window when fewer than two did.
func distinctStep(pts []Point, window time.Duration) time.Duration {
	obs := Observed(pts)
	if n := len(obs); n >= 2 {
		return max(obs[n-1].T.Sub(obs[0].T)/time.Duration(n-1), pts[len(pts)-1].T.Sub(obs[n-1].T))
	}
	return window
}

// sortSpikes orders spikes by their start.
func sortSpikes(spikes []Spike) {
	slices.SortStableFunc(spikes, func(a, b Spike) int { return a.Start.Compare(b.Start) })
}

// leadingSpike is the run of high readings the window opens with, when the live heap then
// comes back to its floor and the bursts recur later (the caller found another spike): one
// burst among others, not a start-up, though its rise came before the window.
func leadingSpike(ev *evidence.Evidence, pts []Point, high func(int) bool, lowAfter []float64, floor float64, quietGap time.Duration) (Spike, bool) {
	j := 0
	for j+1 < len(pts) && high(j+1) && pts[j+1].T.Sub(pts[j].T) < quietGap {
		j++
	}
	if j+1 >= len(pts) {
		return Spike{}, false
	}
	sp := Spike{Start: pts[0].T, End: pts[j].T, Baseline: floor, Readings: j + 1, From: ev.Start, To: pts[j+1].T, Leading: true}
	for _, p := range pts[:j+1] {
		sp.PeakLive = math.Max(sp.PeakLive, p.V)
	}
	sp.PeakHeap = peakHeap(ev, sp.Start, sp.End, sp.PeakLive)
	h := sp.Height()
	if h < spikeMinHeight || h < spikeMinRatio*floor || lowAfter[j+1] > floor+spikeReturn*h {
		return Spike{}, false
	}
	return sp, true
}

// SpikeSeries is the series spikes are looked for in, and what it is.
type SpikeSeries struct {
	Points []Point
	// Garbage is the GC cycle's garbage a reading may hold, as a share of the live heap.
	Garbage float64
	// Src is the readings' source; Goal is true when they are the live heap as the GC's goal
	// follows it, InUse when they are the heap in use.
	Src         Source
	Goal, InUse bool
	Step        time.Duration // between readings
}

// spikeSeriesOf picks the finest reading of the live heap: gctrace's or runtime/metrics'
// when there is one; else whichever of the heap profiles and the GC's goal (read with each
// MemStats sample, goal = live x (1 + GOGC/100)) has more distinct readings; else the heap
// in use, whose GC sawtooth is allowed for.
func spikeSeriesOf(ev *evidence.Evidence) SpikeSeries {
	mk := func(pts []Point, garbage float64, sd SpikeSeries) SpikeSeries {
		sd.Points, sd.Garbage = pts, garbage
		if n := len(pts); n >= 2 {
			sd.Step = pts[n-1].T.Sub(pts[0].T) / time.Duration(n-1)
		}
		return sd
	}
	live := ev.Live
	switch {
	case !live.Empty() && (live.Src == evidence.SourceGCTrace || live.Src == evidence.SourceRuntimeMetrics || live.Src == evidence.SourceProcessMemory):
		return mk(live.Points, 0, SpikeSeries{Src: live.Src})
	case !live.Empty():
		if goal, ok := goalLive(ev); ok && len(Observed(goal)) > len(Observed(live.Points)) {
			return mk(goal, 0, SpikeSeries{Src: ev.HeapGoal.Src, Goal: true})
		}
		return mk(live.Points, 0, SpikeSeries{Src: live.Src})
	}
	if goal, ok := goalLive(ev); ok {
		return mk(goal, 0, SpikeSeries{Src: ev.HeapGoal.Src, Goal: true})
	}
	// Heap in use holds the garbage of the GC cycle too: between two cycles it climbs from the
	// live heap to the goal, live x (1 + GOGC/100). That sawtooth is not a spike: a reading is
	// high only beyond it.
	return mk(ev.HeapInUse.Points, gcHeadroom(ev), SpikeSeries{Src: ev.HeapInUse.Src, InUse: true})
}

// gcHeadroom is the garbage the GC lets grow between cycles, as a share of the live heap:
// GOGC/100 (100 when unknown; GOGC=off leaves the heap to the memory limit, so any sawtooth
// height is possible: 4 is a generous bound that still sees a burst).
func gcHeadroom(ev *evidence.Evidence) float64 {
	switch g := ev.Pacer.GOGC; {
	case g < 0:
		return 4
	case g == 0:
		return 1
	default:
		return g / 100
	}
}

// sparseStep: readings this far apart (a heap profile every 10 s) are each one GC's live
// heap, as likely taken inside a burst as not. The floor around a reading is then the lowest
// before or after it within the lookback: a burst read right after another one rises from
// the floor the heap comes back to, not from the burst before it.
const sparseStep = 5 * time.Second

// floorAfter is the lowest reading in the lookback after reading i (+Inf when none).
func floorAfter(pts []Point, i int, lookback time.Duration) float64 {
	low := math.Inf(1)
	for k := i + 1; k < len(pts) && pts[k].T.Sub(pts[i].T) <= lookback; k++ {
		low = math.Min(low, pts[k].V)
	}
	return low
}

// localFloor is the lowest reading in the lookback before reading i, never below the
// window's low floor; the window's floor when there is none.
func localFloor(pts []Point, i int, lookback time.Duration, global float64) float64 {
	low := math.Inf(1)
	for k := i - 1; k >= 0 && pts[i].T.Sub(pts[k].T) <= lookback; k-- {
		low = math.Min(low, pts[k].V)
	}
	if math.IsInf(low, 1) {
		if i > 0 {
			return math.Max(pts[i-1].V, global)
		}
		return global
	}
	return math.Max(low, global)
}

// peakHeap is the most heap in use seen during [from, to]: at the start of each GC (the tops
// of the sawtooth) or in the Go readings; at least the live peak.
func peakHeap(ev *evidence.Evidence, from, to time.Time, live float64) float64 {
	peak := live
	for _, s := range []*evidence.Series{&ev.HeapAtGC, &ev.HeapInUse} {
		for _, p := range s.Between(from, to) {
			peak = math.Max(peak, p.V)
		}
	}
	return peak
}
