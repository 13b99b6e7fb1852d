package diagnose

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// spikeMinExplained: the excess allocation between the snapshots around the spikes must
// reach this share of their height for the spikes to count as bursts of allocation.
const spikeMinExplained = 0.25

// transientSpike reports bursts of short-lived allocation that lift memory far above the
// floor, and names what was allocated between the heap snapshots around each burst.
func transientSpike(in *input) outcome {
	fs := in.f
	sd := fs.SpikeSeries
	spikes := fs.Spikes
	if len(sd.Points) < 4 && len(spikes) == 0 {
		return cannot(KindTransientSpike, 0, "the live heap was read %d time(s): %s", len(sd.Points), orGap(fs.Gaps[facts.GapLive], "too few readings to see a burst"))
	}
	if len(spikes) == 0 {
		if sd.Step >= 5*time.Second {
			return cannot(KindTransientSpike, 0, "the live heap was read every %s (%s): bursts shorter than that cannot be seen; run the program under memdoctor run (gctrace) or embed the agent", humanDuration(sd.Step.Seconds()), spikeSeriesWhat(sd))
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
	perMin := float64(len(spikes)) / math.Max(fs.Seconds(), 1) * 60
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
			bytesStr(peak.Baseline), bytesStr(peak.PeakLive), complete, humanDuration(fs.Seconds()), perMin,
			spikeSeen(facts.Median(readings), facts.Median(durations)), bytesStr(peakHeap)),
		Evidence: map[string]float64{
			"spikes_count":                  float64(len(spikes)),
			"spikes_per_minute":             perMin,
			"spike_height_max_bytes":        peak.Height(),
			"spike_height_median_bytes":     facts.Median(heights),
			"spike_duration_median_seconds": facts.Median(durations),
			"spike_readings_median_count":   facts.Median(readings),
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
	if fs.Budget > 0 && peakHeap >= 0.8*float64(fs.Budget) {
		f.Severity = Critical
		f.Detail += fmt.Sprintf(" The spike's heap alone reaches %s of the memory budget.", pct(peakHeap/float64(fs.Budget)))
	}
	culprits, pair, explained, shown := in.spikeCulprits()
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
	addAssists(fs.Assists, &f)
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

// spikeSeriesWhat says what the spikes were looked for in.
func spikeSeriesWhat(sd facts.SpikeSeries) string {
	switch {
	case sd.Goal:
		return "the GC's goal"
	case sd.InUse:
		return sd.Src.String() + " heap in use"
	}
	return sd.Src.String()
}

// spikeCulprits sums, over the spikes the profiles bracket, what was allocated between the
// snapshots around each, less what the program allocates anyway in that time (each site's
// least rate between periodic snapshots), or what the spike held when a snapshot saw it up.
// It returns the pair of the largest spike it could explain, the excess allocation as a
// share of the spikes' heights, and whether every pair's later snapshot is known to show the
// spike's allocation (two GC cycles after it).
func (in *input) spikeCulprits() ([]Culprit, []facts.Snapshot, float64, bool) {
	if len(in.f.Heaps) < 2 {
		return nil, nil, 0, false
	}
	shown := true
	background := in.f.Background
	excess := map[string]*Culprit{}
	var total float64
	var bestPair []facts.Snapshot
	var bestHeight, heights float64
	for _, a := range in.f.SpikeAllocs {
		s, held := a.Spike, a.Held
		shown = shown && a.Shown
		if a.Err != nil {
			in.notef("transient-spike: %v", a.Err)
			continue
		}
		dt := a.After.T.Sub(a.Before.T).Seconds()
		heights += s.Height()
		for _, row := range a.Diff.ByFunction {
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
			bestHeight, bestPair = s.Height(), []facts.Snapshot{a.Before, a.After}
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

// spikeAdvice suggests fixes for what the spike culprits do.
func spikeAdvice(cs []Culprit) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range facts.MatchPatterns(c.Stack) {
			if a := patternAdvice[p.Name].spike; a != "" && !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return append(out,
		"Bound how many such requests run at once (a semaphore sized so that concurrency x per-request peak fits the budget), so bursts cannot stack up.",
		"Set GOMEMLIMIT to the memory the process may use: the GC then works harder near the limit instead of letting a burst's garbage pile up.")
}
