package diagnose

import (
	"math"
	"time"
)

// Spike is one transient rise of the live heap above its steady state.
type Spike struct {
	Start, End time.Time
	// PeakLive is the highest live heap in the spike; Baseline the steady state around it.
	PeakLive, Baseline float64
	// PeakHeap is the most heap in use (live plus garbage) seen in the spike, when known.
	PeakHeap float64
	// Cycles is the number of GC cycles the spike spanned.
	Cycles int
}

// Height is how far the live heap rose above the steady state.
func (s Spike) Height() float64 { return s.PeakLive - s.Baseline }

// Duration is how long the GC cycles saw the live heap high: from the first to the last of
// them (0 when one cycle saw it). When it began and ended exactly is not known: between
// cycles nothing measures the live heap.
func (s Spike) Duration() time.Duration { return s.End.Sub(s.Start) }

// Spike detection thresholds.
const (
	spikeMinHeight = 16 << 20 // bytes above the steady state
	spikeMinRatio  = 0.5      // ... and at least this share of it
	// spikeQuietGap: no GC for this long means allocation stopped, and a burst ended.
	spikeQuietGap = 2 * time.Second
	// spikeReturn: after a spike the live heap must come back below the baseline plus this
	// share of the spike's height, or it was not transient.
	spikeReturn = 0.5
)

// gcPoint is what one GC cycle saw.
type gcPoint struct {
	t          time.Time
	live, heap float64
}

// Spikes finds the transient spikes of the live heap, cycle by cycle: runs of GC cycles whose
// live heap stands well above the steady state (the 10th percentile), ended by a cycle back
// below the threshold or by a quiet gap (no GC: the burst's allocation stopped), and
// followed by a cycle that finds the live heap back down. A rise that does not come back is
// not transient: that is the leak rule's business. The result is computed once.
func (in *Input) Spikes() []Spike {
	in.spikesOnce.Do(func() { in.spikes = findSpikes(in.gcPoints()) })
	return in.spikes
}

func findSpikes(pts []gcPoint) []Spike {
	if len(pts) < 4 {
		return nil
	}
	lives := make([]float64, len(pts))
	for i, p := range pts {
		lives[i] = p.live
	}
	base := percentile(lives, 10)
	threshold := base + math.Max(spikeMinHeight, spikeMinRatio*base)
	// Runs of cycles above the threshold, split at quiet gaps.
	type run struct{ from, to int }
	var runs []run
	for i := 0; i < len(pts); i++ {
		if pts[i].live <= threshold {
			continue
		}
		r := run{i, i}
		for r.to+1 < len(pts) && pts[r.to+1].live > threshold && pts[r.to+1].t.Sub(pts[r.to].t) < spikeQuietGap {
			r.to++
		}
		runs = append(runs, r)
		i = r.to
	}
	// lowAfter[i] is the lowest live heap from cycle i on: "does it come back?" in O(1).
	lowAfter := make([]float64, len(pts)+1)
	lowAfter[len(pts)] = math.Inf(1)
	for i := len(pts) - 1; i >= 0; i-- {
		lowAfter[i] = math.Min(lowAfter[i+1], pts[i].live)
	}
	var spikes []Spike
	for _, r := range runs {
		s := Spike{Start: pts[r.from].t, End: pts[r.to].t, Baseline: localBaseline(pts, r.from, base), Cycles: r.to - r.from + 1}
		for _, p := range pts[r.from : r.to+1] {
			s.PeakLive = math.Max(s.PeakLive, p.live)
			s.PeakHeap = math.Max(s.PeakHeap, p.heap)
		}
		if h := s.Height(); h < spikeMinHeight || h < spikeMinRatio*s.Baseline {
			continue // high only against a baseline the heap has long outgrown
		}
		// Transient: a later cycle finds the live heap back down.
		if lowAfter[r.to+1] <= s.Baseline+spikeReturn*(s.PeakLive-s.Baseline) {
			spikes = append(spikes, s)
		}
	}
	return spikes
}

// spikeLookback is how far before a spike its local steady state is measured.
const spikeLookback = 10 * time.Second

// localBaseline is the steady state just before the cycle at index from: the lowest live heap
// of the cycles in the preceding spikeLookback, or the whole window's baseline when there are
// none. A heap that grows for other reasons (a leak) must not make every bump a spike.
func localBaseline(pts []gcPoint, from int, global float64) float64 {
	low := math.Inf(1)
	for i := from - 1; i >= 0 && pts[from].t.Sub(pts[i].t) <= spikeLookback; i-- {
		low = math.Min(low, pts[i].live)
	}
	if math.IsInf(low, 1) {
		return global
	}
	return math.Max(low, global)
}

// gcPoints returns what each GC cycle saw, in time order: from gctrace, else from the Go
// readings whose cycle count moved, else from the heap snapshots (inuse_space, as of the last
// GC).
func (in *Input) gcPoints() []gcPoint {
	var pts []gcPoint
	for _, ev := range in.GC {
		pts = append(pts, gcPoint{ev.Time, float64(ev.HeapLive), float64(max(ev.HeapStart, ev.HeapEnd))})
	}
	if len(pts) > 0 {
		return pts
	}
	for i, g := range in.Go {
		if g.HeapLiveBytes > 0 && (i == 0 || g.GCCycles != in.Go[i-1].GCCycles) {
			pts = append(pts, gcPoint{g.T, float64(g.HeapLiveBytes), float64(g.HeapObjectsBytes)})
		}
	}
	if len(pts) > 0 {
		return pts
	}
	for _, h := range in.HeapTotals() {
		pts = append(pts, gcPoint{h.T, float64(h.InuseSpace), float64(h.InuseSpace)})
	}
	return pts
}
