package facts

import (
	"math"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// SpikeAlloc is what the heap profiles say was allocated around one spike: the snapshots
// before and after it (or during it), and their diff.
type SpikeAlloc struct {
	Spike         Spike
	Before, After Snapshot
	// Held is true when After was taken while the spike was up: Diff is then what grew in
	// use between the snapshots, what the spike held, with no background to subtract. Else
	// Diff is what was allocated (alloc_space) between them.
	Held bool
	// Shown is true when After is known to show the spike's allocation: a snapshot the agent
	// captured after it, or one taken two GC cycles after it ended (a heap profile is up to
	// two cycles old). Always true when Held.
	Shown bool
	Diff  *SiteDiff
	Err   error // the snapshots could not be compared
}

// How many spikes, the highest first, are explained by profiles, and how many pairs of
// periodic snapshots the background allocation rate is read from.
const (
	maxSpikesExplained = 8
	maxRatePairs       = 12
)

// heldShare: a snapshot taken during a spike shows it when what grew in use since the one
// before explains at least this share of the spike's height (a heap profile is up to two GC
// cycles old, so one taken early in a spike may not show it yet).
const heldShare = 0.25

// spikeAllocsOf pairs the snapshots around each of the highest spikes (a spike already up at
// the window's start has no snapshot before its rise). It needs two heap snapshots.
func spikeAllocsOf(ev *evidence.Evidence, spikes []Spike) []SpikeAlloc {
	heaps := ev.Heaps
	if len(heaps) < 2 || len(spikes) == 0 {
		return nil
	}
	order := append([]Spike(nil), spikes...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Height() > order[j].Height() })
	var out []SpikeAlloc
	for i, s := range order {
		if i == maxSpikesExplained {
			break
		}
		if s.Leading { // no snapshot before its rise
			continue
		}
		a := SpikeAlloc{Spike: s, Shown: true}
		a.Before, a.After, a.Diff, a.Held = heldInSpike(ev, heaps, s)
		if !a.Held {
			pub := published(ev, s.End)
			var ok bool
			a.Before, a.After, ok = bracket(heaps, s, pub)
			if !ok {
				continue
			}
			a.Shown = a.After.Role() == session.RoleAfter || !pub.IsZero() && !a.After.T.Before(pub)
			a.Diff, a.Err = ev.HeapDiff(a.Before, a.After, "alloc_space")
		}
		out = append(out, a)
	}
	return out
}

// heldInSpike looks for a periodic heap snapshot taken while the spike was up and the last
// one before it began: what grew in use between them is what the spike held, the most
// direct proof there is. Of the first three taken during the spike, it keeps the one whose
// growth is largest, and at least heldShare of the spike's height.
func heldInSpike(ev *evidence.Evidence, heaps []Snapshot, s Spike) (before, during Snapshot, d *SiteDiff, ok bool) {
	var b *Snapshot
	tried, best := 0, 0.0
	for i := range heaps {
		h := &heaps[i]
		if !h.Periodic() {
			continue
		}
		if !h.T.After(s.From) {
			b = h
			continue
		}
		if b == nil || h.T.Before(s.Start) || h.T.After(s.End) || tried == 3 {
			continue
		}
		tried++
		diff, err := ev.HeapDiff(*b, *h, "inuse_space")
		if err != nil {
			continue
		}
		var grew float64
		for _, row := range diff.ByFunction {
			grew += math.Max(float64(row.Delta), 0)
		}
		if grew >= heldShare*s.Height() && grew > best {
			before, during, d, ok, best = *b, *h, diff, true, grew
		}
	}
	return before, during, d, ok
}

// bracket picks the snapshots around a spike: a pair the agent captured for it (RoleBefore and
// RoleAfter) when there is one, else the last snapshot before the spike began and
// the first one after it ended and after shown (when known), the time the heap profile
// shows the spike's allocations.
func bracket(heaps []Snapshot, s Spike, shown time.Time) (before, after Snapshot, ok bool) {
	const slack = 2 * time.Second
	var lb, la *Snapshot
	for i := range heaps {
		h := &heaps[i]
		switch {
		case h.Role() == session.RoleBefore && !h.T.After(s.Start.Add(slack)) && s.Start.Sub(h.T) < 5*time.Minute:
			lb = h
		case h.Role() == session.RoleAfter && lb != nil && !h.T.Before(s.Start) && la == nil:
			la = h
		}
	}
	if lb != nil && la != nil {
		return *lb, *la, true
	}
	var b, a *Snapshot
	for i := range heaps {
		h := &heaps[i]
		if !h.Periodic() {
			continue
		}
		if !h.T.After(s.Start) {
			b = h
		}
		if a == nil && !h.T.Before(s.End) && !h.T.Before(shown) {
			a = h
		}
		if s.InProgress && h.T.After(s.Start) {
			a = h // no snapshot after a spike in progress: the last one during it
		}
	}
	if a == nil && !shown.IsZero() { // none late enough: the first after the spike, at least
		return bracket(heaps, s, time.Time{})
	}
	if b == nil || a == nil {
		return before, after, false
	}
	return *b, *a, true
}

// published is when the heap profile shows allocations made at t: it is "up to two garbage
// collection cycles old" (runtime/pprof), so they are in it once two cycles completed after
// them. Zero when the GC cycles were not followed, or two did not complete.
func published(ev *evidence.Evidence, t time.Time) time.Time {
	pts := ev.GCCycles.Points
	i := sort.Search(len(pts), func(i int) bool { return pts[i].T.After(t) })
	if i == 0 {
		return time.Time{}
	}
	base := pts[i-1].V
	for ; i < len(pts); i++ {
		if pts[i].V >= base+2 {
			return pts[i].T
		}
	}
	return time.Time{}
}

// leastAllocRate is what the program allocates anyway: each site's lowest allocation rate
// (bytes/s) over pairs of consecutive periodic snapshots spread over the window. A site that
// allocates in bursts has a pair without one, and its least rate is near zero, however often
// the bursts come and whether or not each was seen as a spike; a steady site's least rate is
// about its usual one. The observer's stacks (culprit.Observer) are left out of the sites and
// given their own least rate: profilers read the process at their own pace.
func leastAllocRate(ev *evidence.Evidence, periodic []Snapshot) (rates map[string]float64, observer float64) {
	rates = map[string]float64{}
	pairs := 0
	stride := max(1, (len(periodic)-1)/maxRatePairs)
	for i := 0; i+1 < len(periodic) && pairs < maxRatePairs; i += stride {
		d, err := ev.HeapDiff(periodic[i], periodic[i+1], "alloc_space")
		dt := periodic[i+1].T.Sub(periodic[i].T).Seconds()
		if err != nil || dt <= 0 {
			continue
		}
		seen := map[string]float64{}
		for _, row := range d.ByFunction {
			if own := row.Delta - row.Observer; own > 0 {
				seen[row.Site.Function] = float64(own) / dt
			}
		}
		if obs := float64(d.Observer) / dt; pairs == 0 || obs < observer {
			observer = obs
		}
		if pairs == 0 {
			rates = seen
		} else {
			for fn, r := range rates {
				rates[fn] = math.Min(r, seen[fn]) // absent from this pair: 0
			}
		}
		pairs++
	}
	if pairs < 2 {
		return map[string]float64{}, 0
	}
	return rates, observer
}
