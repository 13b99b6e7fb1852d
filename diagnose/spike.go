package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

func init() { register(KindTransientSpike, transientSpike) }

// maxSpikesExplained bounds the profile diffs the rule makes.
const maxSpikesExplained = 8

// spikeMinExplained: the excess allocation between the snapshots around the spikes must
// reach this share of their height for the spikes to count as bursts of allocation.
const spikeMinExplained = 0.25

// transientSpike reports bursts of short-lived allocation that lift memory far above the
// steady state, and names what was allocated between the heap snapshots around each burst.
func transientSpike(in *Input) []Finding {
	spikes := in.Spikes()
	if len(spikes) == 0 {
		return nil
	}
	var heights, durations, cycles []float64
	peak := spikes[0]
	for _, s := range spikes {
		heights = append(heights, s.Height())
		durations = append(durations, s.Duration().Seconds())
		cycles = append(cycles, float64(s.Cycles))
		if s.Height() > peak.Height() {
			peak = s
		}
	}
	perMin := float64(len(spikes)) / math.Max(in.Seconds(), 1) * 60
	peakHeap := math.Max(peak.PeakHeap, peak.PeakLive)
	f := Finding{
		Kind:     KindTransientSpike,
		Severity: Info,
		Title: fmt.Sprintf("%d spike(s) of the live heap, up to %s above the steady %s",
			len(spikes), bytesStr(peak.Height()), bytesStr(peak.Baseline)),
		Detail: fmt.Sprintf("The live heap rose from its steady state (%s) to as much as %s and came back: %d time(s) in %s "+
			"(%.1f per minute), each seen high by %.0f GC cycle(s) over %s (median). The heap in use peaked at %s. "+
			"Peak memory, and so the memory the process must be given, is set by these bursts, not by the steady state.",
			bytesStr(peak.Baseline), bytesStr(peak.PeakLive), len(spikes), humanDuration(in.Seconds()), perMin,
			median(cycles), humanDuration(median(durations)), bytesStr(peakHeap)),
		Evidence: map[string]float64{
			"spikes_count":                  float64(len(spikes)),
			"spikes_per_minute":             perMin,
			"spike_height_max_bytes":        peak.Height(),
			"spike_height_median_bytes":     median(heights),
			"spike_duration_median_seconds": median(durations),
			"spike_gc_cycles_median_count":  median(cycles),
			"steady_live_heap_bytes":        peak.Baseline,
			"peak_live_heap_bytes":          peak.PeakLive,
			"peak_heap_in_use_bytes":        peakHeap,
		},
		Start: peak.Start, End: peak.End,
	}
	if peak.Height() >= 64<<20 || peak.Height() >= 2*peak.Baseline && peak.Height() >= 32<<20 {
		f.Severity = Warning
	}
	if in.Budget > 0 && peakHeap >= 0.8*float64(in.Budget) {
		f.Severity = Critical
		f.Detail += fmt.Sprintf(" The spike's heap alone reaches %s of the memory budget.", pct(peakHeap/float64(in.Budget)))
	}
	culprits, pair, explained := in.spikeCulprits(spikes)
	f.Culprits = culprits
	if pair != nil {
		f.Evidence["allocation_to_height_ratio"] = explained
		if explained < spikeMinExplained {
			// What was allocated around the spikes is a small part of their height: no burst
			// of allocation to blame; the bumps are the ordinary swing of a busy heap.
			f.Severity = Info
			f.Detail += fmt.Sprintf(" The allocation between the snapshots around the spikes accounts for only %s of their height: "+
				"no burst stands out from the program's usual allocation.", pct(explained))
		}
	}
	if pair != nil {
		f.Profiles = profileNames(pair[0], pair[1])
		f.Advice = append(f.Advice, "See what was allocated during the largest spike: "+pprofDiffCommand("alloc_space", pair[0], pair[1]))
	} else {
		in.notef("transient-spike: no heap snapshots around the spikes to say what was allocated (shorten --interval)")
	}
	in.Assists().addTo(&f)
	f.Advice = append(f.Advice, spikeAdvice(f.Culprits)...)
	return []Finding{f}
}

// spikeCulprits diffs alloc_space between the snapshots just before and just after each
// spike, less what the program allocates anyway in that time (the per-site rate between
// two quiet snapshots), and sums it over the spikes. It returns the pair of the largest
// spike it could explain, and the excess allocation as a share of the spikes' heights.
func (in *Input) spikeCulprits(spikes []Spike) ([]Culprit, []session.ProfileRef, float64) {
	heaps := in.Session.ProfilesOf(session.KindHeap, false)
	if len(heaps) < 2 {
		return nil, nil, 0
	}
	background := in.backgroundAllocRate(heaps, spikes)
	excess := map[string]*Culprit{}
	var total float64
	var bestPair []session.ProfileRef
	var bestHeight, heights float64
	order := append([]Spike(nil), spikes...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Height() > order[j].Height() })
	for i, s := range order {
		if i == maxSpikesExplained {
			break
		}
		before, after, ok := bracket(heaps, s)
		if !ok {
			continue
		}
		d, err := in.heapDiff(before, after, "alloc_space")
		if err != nil {
			in.notef("transient-spike: %v", err)
			continue
		}
		dt := after.Time.Sub(before.Time).Seconds()
		heights += s.Height()
		for _, row := range d.ByFunction {
			x := float64(row.Delta) - background[row.Site.Function]*dt
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
			bestHeight, bestPair = s.Height(), []session.ProfileRef{before, after}
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
	return keepCulprits(out, 5), bestPair, total / math.Max(heights, 1)
}

// bracket picks the snapshots around a spike: a pair the agent captured for it (labelled
// before-*/after-*) when there is one, else the last snapshot before the spike began and
// the first one after it ended.
func bracket(heaps []session.ProfileRef, s Spike) (before, after session.ProfileRef, ok bool) {
	const slack = 2 * time.Second
	var lb, la *session.ProfileRef
	for i := range heaps {
		h := &heaps[i]
		switch {
		case strings.HasPrefix(h.Label, "before-") && !h.Time.After(s.Start.Add(slack)) && s.Start.Sub(h.Time) < 5*time.Minute:
			lb = h
		case strings.HasPrefix(h.Label, "after-") && lb != nil && !h.Time.Before(s.Start) && la == nil:
			la = h
		}
	}
	if lb != nil && la != nil {
		return *lb, *la, true
	}
	var b, a *session.ProfileRef
	for i := range heaps {
		h := &heaps[i]
		if h.Label != "" {
			continue
		}
		if !h.Time.After(s.Start) {
			b = h
		}
		if a == nil && !h.Time.Before(s.End) {
			a = h
		}
	}
	if b == nil || a == nil {
		return before, after, false
	}
	return *b, *a, true
}

// backgroundAllocRate is each site's allocation rate (bytes/s) between the two consecutive
// periodic snapshots farthest from any spike.
func (in *Input) backgroundAllocRate(heaps []session.ProfileRef, spikes []Spike) map[string]float64 {
	var periodic []session.ProfileRef
	for _, h := range heaps {
		if h.Label == "" {
			periodic = append(periodic, h)
		}
	}
	best, bestLen := -1, 0.0
	for i := 0; i+1 < len(periodic); i++ {
		a, b := periodic[i].Time, periodic[i+1].Time
		quiet := true
		for _, s := range spikes {
			if s.Start.Before(b.Add(2*time.Second)) && s.End.After(a.Add(-2*time.Second)) {
				quiet = false
				break
			}
		}
		if l := b.Sub(a).Seconds(); quiet && l > bestLen {
			best, bestLen = i, l
		}
	}
	rates := map[string]float64{}
	if best < 0 {
		return rates
	}
	d, err := in.heapDiff(periodic[best], periodic[best+1], "alloc_space")
	if err != nil {
		return rates
	}
	for _, row := range d.ByFunction {
		if row.Delta > 0 {
			rates[row.Site.Function] = float64(row.Delta) / bestLen
		}
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
