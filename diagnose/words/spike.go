package words

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

func spike(f *Finding, v rule.Verdict, c *rule.SpikeCase) {
	peak := c.Peak
	perMin := float64(len(c.Spikes)) / math.Max(c.Window, 1) * 60
	f.Title = fmt.Sprintf("%d spike(s) of the live heap, up to %s above its floor of %s",
		len(c.Spikes), bytesStr(peak.Height()), bytesStr(peak.Baseline))
	f.Detail = fmt.Sprintf("The live heap rose from its floor (%s) to as much as %s and came back: %d time(s) in %s "+
		"(%.1f per minute), each seen high by %s (median). The heap in use peaked at %s. "+
		"Peak memory, and so the memory the process must be given, is set by these bursts, not by the steady state.",
		bytesStr(peak.Baseline), bytesStr(peak.PeakLive), c.Complete, humanDuration(c.Window), perMin,
		spikeSeen(c.Readings, c.Durations), bytesStr(c.PeakHeap))
	f.Evidence = map[string]float64{
		"spikes_count":                float64(len(c.Spikes)),
		"spikes_per_minute":           perMin,
		"spike_height_max_bytes":      peak.Height(),
		"spike_height_median_bytes":   c.Heights,
		"spike_readings_median_count": c.Readings,
		"floor_live_heap_bytes":       peak.Baseline,
		"peak_live_heap_bytes":        peak.PeakLive,
		"peak_heap_in_use_bytes":      c.PeakHeap,
	}
	if c.Durations > 0 { // one reading each: how long they lasted is not known
		f.Evidence["spike_duration_median_seconds"] = c.Durations
	}
	if c.Complete == 0 {
		f.Title = fmt.Sprintf("the live heap is %s above its floor of %s as the window ends: a spike in progress, or the start of a rise",
			bytesStr(peak.Height()), bytesStr(peak.Baseline))
		f.Detail = fmt.Sprintf("The live heap rose from its floor (%s) to %s and had not come back when the window ended. "+
			"Watch about %s more to tell a burst that ends from a rise that stays.", bytesStr(peak.Baseline), bytesStr(peak.PeakLive), humanDuration(v.WatchMoreSeconds))
	} else if c.Complete < len(c.Spikes) {
		f.Detail += " The last one was still in progress when the window ended."
	}
	if c.InFlight != nil {
		inFlightSpike(f, c)
	}
	if c.OverBudget {
		f.Detail += fmt.Sprintf(" The spike's heap alone reaches %s of the memory budget.", pct(c.PeakHeap/float64(c.Budget)))
	}
	if c.Pair != nil && c.InFlight == nil {
		f.Evidence["allocation_to_height_ratio"] = c.Explained
		if c.Unexplained && !c.Shown {
			f.Detail += " The heap profiles after the spikes may not show their allocation yet: a heap profile is up to two GC cycles old."
		}
		switch {
		case c.ByObserver:
			observerSpike(f, c)
		case c.Unexplained && c.Shown:
			f.Detail += fmt.Sprintf(" The allocation between the snapshots around the spikes accounts for only %s of their height: "+
				"no burst stands out from the program's usual allocation.", pct(c.Explained))
		}
		f.Advice = append(f.Advice, "See what was allocated during the largest spike: "+pprofDiffCommand("alloc_space", c.Pair[0].Path, c.Pair[1].Path))
	}
	addAssists(c.Assists, f)
	f.Advice = append(f.Advice, spikeAdvice(f.Culprits)...)
}

// observerSpike says spikes that profilers reading the process made, not the program.
func observerSpike(f *Finding, c *rule.SpikeCase) {
	f.Title += ", made by the profilers reading it"
	f.Detail += fmt.Sprintf(" Between the snapshots around the spikes the profilers reading the process (its pprof handlers, runtime/pprof or "+
		"memdoctor's agent, writing goroutine and heap profiles) allocated %s of their height, more than the program's own code allocated beyond its usual rate (%s): "+
		"the spikes are most likely the cost of being read, not the program's (a goroutine profile builds a record for every goroutine, "+
		"and a GC that runs while one is written counts it live).",
		pct(c.Observer), pct(c.Explained))
	f.Evidence["observer_allocation_to_height_ratio"] = c.Observer
	f.Advice = append(f.Advice, "Read the goroutines of a service this large less often, or from its memory: memdoctor watch of a local service reads them there, "+
		"without stopping it, past 50,000 goroutines.")
}

// spikeSeen says how long readings saw a spike high.
func spikeSeen(readings, secs float64) string {
	if readings <= 1 || secs <= 0 {
		return "one reading"
	}
	return fmt.Sprintf("%.0f readings over %s", readings, humanDuration(secs))
}

// spikeAdvice suggests fixes for what the spike culprits do.
func spikeAdvice(cs []rule.Culprit) []string {
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

// inFlightSpike says bursts a heap profile caught in flight at every GC.
func inFlightSpike(f *Finding, c *rule.SpikeCase) {
	b, peak := c.InFlight, c.Peak
	held := facts.Median(facts.Values(b.Held))
	f.Title = fmt.Sprintf("bursts in flight at every GC: %s held up to %s whenever the GC ran, allocated anew in between, over a heap of about %s",
		b.Site.Function, bytesStr(peak.Height()), bytesStr(b.Rest))
	f.Detail = fmt.Sprintf("At %d of the %d GCs the heap profiles saw after the first, %s held no more than it had allocated since the GC before "+
		"(%s at the median GC, while it allocated %s over %s, %s of all the program allocated): what it held at each GC was a burst in flight, "+
		"not memory it keeps. The GC ran inside the bursts, so every reading of the live heap held one: the live heap never showed its floor "+
		"(about %s without them), and a heap profile shows the bursts' site as if it held memory for good. "+
		"Peak memory, and so the memory the process must be given, is set by these bursts, not by the steady state.",
		len(c.Spikes), len(b.Held)-1, b.Site.Function, bytesStr(held), bytesStr(b.Allocated), humanDuration(c.Window), pct(b.Allocated/math.Max(b.Total, 1)),
		bytesStr(b.Rest))
	f.Evidence["site_held_median_bytes"] = held
	f.Evidence["site_allocated_bytes"] = b.Allocated
}
