package facts

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// Bursts of allocation in the heap in use.
const (
	// burstSteep: a burst's rise from one reading to the next is this many times steeper than
	// the heap's usual climb between GC cycles.
	burstSteep = 6
	// burstMinRatio: a burst adds at least this share of the floor of the heap in use (its
	// steepness already sets it apart from the heap's climb; on a large heap, a quarter more is
	// a quarter more memory at the peak).
	burstMinRatio = 0.25
	// burstLookback: how far back a burst's floor (the lowest heap in use) is looked for.
	burstLookback = 30 * time.Second
)

// inUseBursts finds bursts of allocation between GC cycles in the heap in use: rises from one
// reading to the next far steeper than its usual climb (at least spikeMinHeight and
// burstMinRatio of the floor) that the GC frees. When the GC runs seldom, a burst made and
// dropped between two cycles never shows in the live heap, yet it sets the peak memory.
// Whether the bursts were freed is judged on them together: the floor the GC brings the heap
// back to (its lows after each fall) must have grown by less than half of what they added, or
// they were kept (a leak in steps, which the leak rules judge). A burst no GC followed is in
// progress. The spikes' Baseline is the floor of the heap in use before each (the lowest
// reading of the lookback, just after a GC), their PeakLive that floor plus the rise.
func inUseBursts(ev *evidence.Evidence) []Spike {
	pts := settled(ev, ev.HeapInUse.Points)
	n := len(pts)
	if n < 8 {
		return nil
	}
	var climbs []float64
	for i := 1; i < n; i++ {
		if dt, d := pts[i].T.Sub(pts[i-1].T).Seconds(), pts[i].V-pts[i-1].V; d > 0 && dt > 0 {
			climbs = append(climbs, d/dt)
		}
	}
	if len(climbs) < 4 {
		return nil
	}
	usual := Median(climbs)
	fell := func(k int) bool { return pts[k].V < 0.95*pts[k-1].V } // a GC cycle ended
	var out []Spike
	var added float64
	floorBefore := math.NaN()
	for i := 1; i < n; i++ {
		dt := pts[i].T.Sub(pts[i-1].T).Seconds()
		rise := pts[i].V - pts[i-1].V
		low := pts[i-1].V
		for k := i - 1; k >= 0 && pts[i].T.Sub(pts[k].T) <= burstLookback; k-- {
			low = math.Min(low, pts[k].V)
		}
		if rise < math.Max(spikeMinHeight, burstMinRatio*low) || rise < burstSteep*usual*math.Max(dt, 1) {
			continue
		}
		if math.IsNaN(floorBefore) {
			floorBefore = low
		}
		j := i
		for j+1 < n && !fell(j+1) {
			j++
		}
		sp := Spike{Start: pts[i].T, End: pts[j].T, From: pts[i-1].T, Baseline: low, PeakLive: low + rise, Readings: j - i + 1, InUse: true}
		for _, p := range pts[i : j+1] {
			sp.PeakHeap = math.Max(sp.PeakHeap, p.V)
		}
		if j+1 < n {
			sp.To = pts[j+1].T
			added += rise
		} else {
			sp.InProgress, sp.To = true, ev.End
		}
		out = append(out, sp)
	}
	if len(out) == 0 {
		return nil
	}
	lastLow := math.NaN() // the heap in use just after the last GC
	for k := n - 1; k > 0; k-- {
		if fell(k) {
			lastLow = pts[k].V
			break
		}
	}
	if added > 0 && !math.IsNaN(lastLow) && lastLow-floorBefore >= added/2 {
		return nil // the GCs did not take them back: kept
	}
	return out
}

// withBursts adds to the spikes of the live heap the bursts of the heap in use that none of
// them covers, in time order, when the heap in use was read several times more often than
// the live heap (else the live heap's readings see what the bursts do).
func withBursts(ev *evidence.Evidence, spikes []Spike, liveStep time.Duration) []Spike {
	if inUse := ev.HeapInUse.Points; len(inUse) < 2 || liveStep < 3*inUse[len(inUse)-1].T.Sub(inUse[0].T)/time.Duration(len(inUse)-1) {
		return spikes
	}
	out := spikes
	for _, b := range inUseBursts(ev) {
		covered := false
		for _, s := range spikes {
			if !b.End.Before(s.Start) && !b.Start.After(s.End) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, b)
		}
	}
	if len(out) == len(spikes) {
		return spikes
	}
	sortSpikes(out)
	return out
}
