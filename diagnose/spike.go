package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

func init() { register(KindTransientSpike, transientSpike) }

// maxSpikesExplained bounds the profile diffs the rule makes.
const maxSpikesExplained = 8

// spikeMinExplained: the excess allocation between the snapshots around the spikes must
// reach this share of their height for the spikes to count as bursts of allocation.
const spikeMinExplained = 0.25

// transientSpike reports bursts of short-lived allocation that lift memory far above the
// floor, and names what was allocated between the heap snapshots around each burst.
func transientSpike(in *input) outcome {
	ev := in.ev
	sd := spikeSeriesOf(ev)
	spikes := in.spikes
	if len(sd.pts) < 4 && len(spikes) == 0 {
		return cannot(KindTransientSpike, 0, "the live heap was read %d time(s): %s", len(sd.pts), orGap(ev.Gaps[evidence.GapLive], "too few readings to see a burst"))
	}
	if len(spikes) == 0 {
		if sd.step >= 5*time.Second {
			return cannot(KindTransientSpike, 0, "the live heap was read every %s (%s): bursts shorter than that cannot be seen; run the program under memdoctor run (gctrace) or embed the agent", humanDuration(sd.step.Seconds()), sd.what)
		}
		return outcome{}
	}
	var heights, durations, readings []float64
	peak := spikes[0]
	complete := 0
	for _, sp := range spikes {
		heights = append(heights, sp.Height())
		durations = append(durations, sp.Duration().Seconds())
		readings = append(readings, float64(sp.Readings))
		if sp.Height() > peak.Height() {
			peak = sp
		}
		if !sp.InProgress {
			complete++
		}
	}
	perMin := float64(len(spikes)) / math.Max(ev.Seconds(), 1) * 60
	peakHeap := math.Max(peak.PeakHeap, peak.PeakLive)
	f := Finding{
		Kind:       KindTransientSpike,
		Severity:   Info,
		Confidence: Confirmed,
		Title: fmt.Sprintf("%d spike(s) of the live heap, up to %s above its floor of %s",
			len(spikes), bytesStr(peak.Height()), bytesStr(peak.Baseline)),
		Detail: fmt.Sprintf("The live heap rose from its floor (%s) to as much as %s and came back: %d time(s) in %s "+
			"(%.1f per minute), each seen high by %s (median). The heap in use peaked at %s. "+
			"Peak memory, and so the memory the process must be given, is set by these bursts, not by the steady state.",
			bytesStr(peak.Baseline), bytesStr(peak.PeakLive), complete, humanDuration(ev.Seconds()), perMin,
			spikeSeen(median(readings), median(durations)), bytesStr(peakHeap)),
		Evidence: map[string]float64{
			"spikes_count":                  float64(len(spikes)),
			"spikes_per_minute":             perMin,
			"spike_height_max_bytes":        peak.Height(),
			"spike_height_median_bytes":     median(heights),
			"spike_duration_median_seconds": median(durations),
			"spike_readings_median_count":   median(readings),
			"floor_live_heap_bytes":         peak.Baseline,
			"peak_live_heap_bytes":          peak.PeakLive,
			"peak_heap_in_use_bytes":        peakHeap,
		},
		Start: peak.Start, End: peak.End,
	}
	if complete == 0 {
		f.Confidence = Suspected
		f.WatchMoreSeconds = math.Max(30, 2*peak.To.Sub(peak.From).Seconds())
		f.Title = fmt.Sprintf("the live heap is %s above its floor of %s as the window ends: a spike in progress, or the start of a rise",
			bytesStr(peak.Height()), bytesStr(peak.Baseline))
		f.Detail = fmt.Sprintf("The live heap rose from its floor (%s) to %s and had not come back when the window ended. "+
			"Watch about %s more to tell a burst that ends from a rise that stays.", bytesStr(peak.Baseline), bytesStr(peak.PeakLive), humanDuration(f.WatchMoreSeconds))
	} else if complete < len(spikes) {
		f.Detail += " The last one was still in progress when the window ended."
	}
	if peak.Height() >= 64<<20 || peak.Height() >= 2*peak.Baseline && peak.Height() >= 32<<20 {
		f.Severity = Warning
	}
	if ev.Budget > 0 && peakHeap >= 0.8*float64(ev.Budget) {
		f.Severity = Critical
		f.Detail += fmt.Sprintf(" The spike's heap alone reaches %s of the memory budget.", pct(peakHeap/float64(ev.Budget)))
	}
	culprits, pair, explained, shown := in.spikeCulprits(spikes)
	f.Culprits = culprits
	if pair != nil {
		f.Evidence["allocation_to_height_ratio"] = explained
		if explained < spikeMinExplained && !shown {
			f.Detail += " The heap profiles after the spikes may not show their allocation yet: a heap profile is up to two GC cycles old."
		}
		if explained < spikeMinExplained && shown {
			// What was allocated around the spikes is a small part of their height: no burst
			// of allocation to blame; the bumps are the ordinary swing of a busy heap.
			f.Severity = Info
			f.Detail += fmt.Sprintf(" The allocation between the snapshots around the spikes accounts for only %s of their height: "+
				"no burst stands out from the program's usual allocation.", pct(explained))
		}
		f.Profiles = []string{pair[0].Path, pair[1].Path}
		f.Advice = append(f.Advice, "See what was allocated during the largest spike: "+pprofDiffCommand("alloc_space", pair[0], pair[1]))
	} else {
		in.notef("transient-spike: no heap snapshots around the spikes to say what was allocated (shorten --interval)")
	}
	addAssists(ev.Assists(), &f)
	f.Advice = append(f.Advice, spikeAdvice(f.Culprits)...)
	return found(f)
}

// spikeSeen says how long readings saw a spike high.
func spikeSeen(readings, secs float64) string {
	if readings <= 1 || secs <= 0 {
		return "one reading"
	}
	return fmt.Sprintf("%.0f readings over %s", readings, humanDuration(secs))
}

// orGap returns the gap's reason, else the fallback.
func orGap(gap, fallback string) string {
	if gap != "" {
		return gap
	}
	return fallback
}

// spikeCulprits diffs alloc_space between the snapshots just before and just after each
// spike, less what the program allocates anyway in that time (the per-site rate between
// two quiet snapshots), and sums it over the spikes. It returns the pair of the largest
// spike it could explain, the excess allocation as a share of the spikes' heights, and
// whether every pair's later snapshot is known to show the spike's allocation (two GC
// cycles after it).
func (in *input) spikeCulprits(spikes []Spike) ([]Culprit, []evidence.Snapshot, float64, bool) {
	heaps := in.ev.Heaps
	if len(heaps) < 2 {
		return nil, nil, 0, false
	}
	shown := true
	background := in.leastAllocRate(in.ev.PeriodicHeaps())
	excess := map[string]*Culprit{}
	var total float64
	var bestPair []evidence.Snapshot
	var bestHeight, heights float64
	order := append([]Spike(nil), spikes...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Height() > order[j].Height() })
	for i, s := range order {
		if i == maxSpikesExplained {
			break
		}
		if s.Leading { // no snapshot before its rise
			continue
		}
		before, after, d, held := in.heldInSpike(heaps, s)
		if !held {
			pub := published(in.ev, s.End)
			var ok bool
			before, after, ok = bracket(heaps, s, pub)
			if !ok {
				continue
			}
			shown = shown && (strings.HasPrefix(after.Label, "after-") || !pub.IsZero() && !after.T.Before(pub))
			var err error
			if d, err = in.ev.HeapDiff(before, after, "alloc_space"); err != nil {
				in.notef("transient-spike: %v", err)
				continue
			}
		}
		dt := after.T.Sub(before.T).Seconds()
		heights += s.Height()
		for _, row := range d.ByFunction {
			x := float64(row.Delta)
			if !held {
				x -= background[row.Site.Function] * dt
			}
			if x <= 0 {
				continue
			}
			c, ok := excess[row.Site.Function]
			if !ok {
				c = &Culprit{Function: row.Site.Function, File: row.Site.File, Line: row.Site.Line, Stack: row.Stack, Own: row.Site.Own}
				excess[row.Site.Function] = c
			}
			c.Bytes += int64(x)
			total += x
		}
		if s.Height() > bestHeight {
			bestHeight, bestPair = s.Height(), []evidence.Snapshot{before, after}
		}
	}
	out := make([]Culprit, 0, len(excess))
	for _, c := range excess {
		c.Share = float64(c.Bytes) / math.Max(total, 1)
		out = append(out, *c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Function < out[j].Function
	})
	return keepCulprits(out, 5), bestPair, total / math.Max(heights, 1), shown
}

// heldInSpike looks for a periodic heap snapshot taken while the spike was up and the last
// one before it began: what grew in use between them is what the spike held, the most
// direct proof there is, and no background to subtract. It is used when that growth explains
// at least spikeMinExplained of the spike's height (a heap profile is up to two GC cycles
// old, so one taken early in a spike may not show it yet).
func (in *input) heldInSpike(heaps []evidence.Snapshot, s Spike) (before, during evidence.Snapshot, d *evidence.SiteDiff, ok bool) {
	var b *evidence.Snapshot
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
		diff, err := in.ev.HeapDiff(*b, *h, "inuse_space")
		if err != nil {
			continue
		}
		var grew float64
		for _, row := range diff.ByFunction {
			grew += math.Max(float64(row.Delta), 0)
		}
		if grew >= spikeMinExplained*s.Height() && grew > best {
			before, during, d, ok, best = *b, *h, diff, true, grew
		}
	}
	return before, during, d, ok
}

// bracket picks the snapshots around a spike: a pair the agent captured for it (labelled
// before-*/after-*) when there is one, else the last snapshot before the spike began and
// the first one after it ended and after shown (when known), the time the heap profile
// shows the spike's allocations.
func bracket(heaps []evidence.Snapshot, s Spike, shown time.Time) (before, after evidence.Snapshot, ok bool) {
	const slack = 2 * time.Second
	var lb, la *evidence.Snapshot
	for i := range heaps {
		h := &heaps[i]
		switch {
		case strings.HasPrefix(h.Label, "before-") && !h.T.After(s.Start.Add(slack)) && s.Start.Sub(h.T) < 5*time.Minute:
			lb = h
		case strings.HasPrefix(h.Label, "after-") && lb != nil && !h.T.Before(s.Start) && la == nil:
			la = h
		}
	}
	if lb != nil && la != nil {
		return *lb, *la, true
	}
	var b, a *evidence.Snapshot
	for i := range heaps {
		h := &heaps[i]
		if h.Label != "" {
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

// maxRatePairs bounds the profile diffs leastAllocRate makes.
const maxRatePairs = 12

// leastAllocRate is what the program allocates anyway: each site's lowest allocation rate
// (bytes/s) over pairs of consecutive periodic snapshots spread over the window. A site that
// allocates in bursts has a pair without one, and its least rate is near zero, however often
// the bursts come and whether or not each was seen as a spike; a steady site's least rate is
// about its usual one.
func (in *input) leastAllocRate(periodic []evidence.Snapshot) map[string]float64 {
	rates := map[string]float64{}
	pairs := 0
	stride := max(1, (len(periodic)-1)/maxRatePairs)
	for i := 0; i+1 < len(periodic) && pairs < maxRatePairs; i += stride {
		d, err := in.ev.HeapDiff(periodic[i], periodic[i+1], "alloc_space")
		dt := periodic[i+1].T.Sub(periodic[i].T).Seconds()
		if err != nil || dt <= 0 {
			continue
		}
		seen := map[string]float64{}
		for _, row := range d.ByFunction {
			if row.Delta > 0 {
				seen[row.Site.Function] = float64(row.Delta) / dt
			}
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
		return map[string]float64{}
	}
	return rates
}

// spikeAdvice suggests fixes for what the spike culprits do.
func spikeAdvice(cs []Culprit) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range matchPatterns(c.Stack) {
			if a := p.spikeAdvice; a != "" && !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return append(out,
		"Bound how many such requests run at once (a semaphore sized so that concurrency x per-request peak fits the budget), so bursts cannot stack up.",
		"Set GOMEMLIMIT to the memory the process may use: the GC then works harder near the limit instead of letting a burst's garbage pile up.")
}
