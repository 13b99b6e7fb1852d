package diagnose

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// What growth of the allocation rate matters.
var costLimits = limits{minAbs: 8 << 20, minRel: 0.5, minSpan: 20 * time.Second}

// costGrowth reports an allocation rate that climbs steadily, with the GC's work: under
// steady load, each request allocates more and more (a slice copied or scanned per request
// that grows, a cache rebuilt per call...). The load itself is not measured, so the finding
// says what it would mean under steady load.
func costGrowth(in *input) outcome {
	fs := in.f
	if fs.AllocBytes.Len() < 6 {
		return cannot(KindCostGrowth, 0, "allocation was counted %d time(s): %s", fs.AllocBytes.Len(), orGap(fs.Gaps[facts.GapLive], "too few to follow its rate"))
	}
	rates := fs.AllocRates
	g := judgeGrowth(rates, costLimits, 0)
	if !g.judged {
		return cannot(KindCostGrowth, g.watchMore, "the allocation rate was followed over %s: a trend needs %s or more",
			humanDuration(fs.AllocBytes.Span().Seconds()), humanDuration(costLimits.minSpan.Seconds()))
	}
	if g.conf == "" {
		return outcome{}
	}
	f := Finding{
		Kind:             KindCostGrowth,
		Severity:         Info,
		Confidence:       g.conf,
		WatchMoreSeconds: g.watchMore.Seconds(),
		Title:            fmt.Sprintf("the program allocates more and more: %s/s -> %s/s", bytesStr(g.first), bytesStr(g.last)),
		Detail: fmt.Sprintf("The allocation rate rose from %s/s to %s/s over %s (Kendall's tau %.2f, Mann-Kendall p=%.2g over %d slices), %s at the end. "+
			"If the load was steady, each request costs more and more: something per request grows (a slice copied or scanned whole, a map iterated, a cache rebuilt).",
			bytesStr(g.first), bytesStr(g.last), humanDuration(g.span.Seconds()), g.tau, g.p, g.n, risingWord(g)),
		Evidence: map[string]float64{
			"alloc_start_bytes_per_second": g.first,
			"alloc_end_bytes_per_second":   g.last,
			"window_seconds":               g.span.Seconds(),
			"kendall_tau":                  g.tau,
			"mann_kendall_p":               g.p,
		},
		Start: rates[0].T, End: rates[len(rates)-1].T,
	}
	if gc := fs.GC.Rates; len(gc) >= 4 {
		k := min(max(len(gc)/6, 1), 5)
		a, b := facts.Median(facts.Values(gc[:k])), facts.Median(facts.Values(gc[len(gc)-k:]))
		f.Evidence["gc_start_per_second"], f.Evidence["gc_end_per_second"] = a, b
		f.Detail += fmt.Sprintf(" The GC went from %.1f to %.1f cycles per second.", a, b)
		if g.conf == Confirmed && b >= 1.5*a && b >= gcMinRate/2 {
			f.Severity = Warning
		}
	}
	in.costCulprits(&f)
	f.Advice = append(f.Advice,
		"Check whether the traffic grew over the window; if it did not, compare what the top sites allocate per request early and late (go tool pprof -diff_base on the snapshots).",
		"Look for per-request work that grows with the process's age: copying or sorting a growing slice, rebuilding a growing map, rendering a growing list.")
	return found(f)
}

// costCulprits names the sites whose allocation rate grew most between the first and the
// last pairs of periodic heap snapshots.
func (in *input) costCulprits(f *Finding) {
	c := &in.f.Cost
	if !c.Pair {
		return
	}
	de, dl := c.EarlySecs, c.LateSecs
	if de <= 0 || dl <= 0 {
		return
	}
	before := map[string]float64{}
	for _, d := range c.Early.ByFunction {
		before[d.Site.Function] = float64(d.Delta) / de
	}
	var cs []Culprit
	var total float64
	for _, d := range c.Late.ByFunction {
		if up := float64(d.Delta)/dl - before[d.Site.Function]; up > 0 {
			cu := culpritFromDelta(d, c.Late.Unit, 0)
			cu.Bytes = int64(up) // bytes per second more than early on
			cs = append(cs, cu)
			total += up
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Bytes > cs[j].Bytes })
	for i := range cs {
		cs[i].Share = float64(cs[i].Bytes) / math.Max(total, 1)
	}
	f.Culprits = keepCulprits(cs, 5)
	f.Profiles = []string{c.First.Path, c.Last.Path}
}
