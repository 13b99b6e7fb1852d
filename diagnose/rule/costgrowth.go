package rule

import (
	"math"
	"sort"

	"github.com/memdoctor/memdoctor/facts"
)

// CostCase is an allocation rate that climbs steadily.
type CostCase struct {
	Rise Rise
	// GC is set when the GC's rate was followed: its rate early and late, cycles per second.
	GC *[2]float64
	// Ratio is the rate at the end over the rate at the start; SiteRatio the same for the
	// top culprit's own rate, and Concentration that over the same for the rest of the
	// program (both 0 when the profiles did not say).
	Ratio, SiteRatio, Concentration float64
	// SiteFrom and SiteTo are the top culprit's own rate early and late, bytes per second
	// (0 when the profiles did not say).
	SiteFrom, SiteTo float64
}

// costGrowth reports an allocation rate that climbs steadily, with the GC's work: under
// steady load, each request allocates more and more (a slice copied or scanned per request
// that grows, a cache rebuilt per call...). The load itself is not measured, so the verdict
// says what it would mean under steady load.
func costGrowth(fs *facts.Facts, th *Thresholds) outcome {
	if fs.AllocBytes.Len() < 6 {
		return outcome{unjudged: &Unjudged{Kind: KindCostGrowth, Why: WhyTooFew, N: fs.AllocBytes.Len()}}
	}
	rates := fs.AllocRates
	g := judgeGrowth(rates, th.Cost.Limits, 0, &th.Trend)
	if !g.judged {
		return outcome{unjudged: &Unjudged{Kind: KindCostGrowth, Why: WhyTooShort, WatchMoreSeconds: g.watchMore.Seconds(), Span: fs.AllocBytes.Span(), Need: th.Cost.Limits.MinSpan}}
	}
	if g.conf == "" {
		return outcome{}
	}
	c := &CostCase{Rise: g.rise(&th.Trend)}
	v := Verdict{
		Kind: KindCostGrowth, Severity: Info, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(),
		Start: rates[0].T, End: rates[len(rates)-1].T, Case: c,
	}
	if gc := fs.GC.Rates; len(gc) >= 4 {
		k := min(max(len(gc)/6, 1), 5)
		a, b := facts.Median(facts.Values(gc[:k])), facts.Median(facts.Values(gc[len(gc)-k:]))
		c.GC = &[2]float64{a, b}
		if g.conf == Confirmed && b >= th.Cost.WarnGCRatio*a && b >= th.GC.MinRate/2 {
			v.Severity = Warning
		}
	}
	c.Concentration, c.SiteRatio, c.SiteFrom, c.SiteTo = costCulprits(fs, &v, &th.Culprits)
	c.Ratio = g.last / math.Max(g.first, 1)
	if g.conf == Confirmed && math.Max(c.Ratio, c.SiteRatio) >= th.Cost.WarnRatio && c.Concentration >= th.Cost.WarnConcentration {
		v.Severity = Warning
	}
	return outcome{verdicts: []Verdict{v}}
}

// costCulprits names the sites whose allocation rate grew most between the first and the
// last pairs of periodic heap snapshots, and returns how concentrated the climb is at the
// first: how many times over its own rate rose, against how many times over the rest of the
// program's did (0 when unknown), its own rate's climb (late over early; 0 when unknown),
// and its own rates early and late. More traffic raises every site's rate alike (a
// concentration of 1); a request that costs more and more at one site raises that site's
// alone.
func costCulprits(fs *facts.Facts, v *Verdict, th *Culprits) (concentration, ratio, from, to float64) {
	c := &fs.Cost
	if !c.Pair {
		return 0, 0, 0, 0
	}
	de, dl := c.EarlySecs, c.LateSecs
	if de <= 0 || dl <= 0 {
		return 0, 0, 0, 0
	}
	before := map[string]float64{}
	var early, late float64
	for _, d := range c.Early.ByFunction {
		before[d.Site.Function] = float64(d.Delta) / de
		early += math.Max(float64(d.Delta)/de, 0)
	}
	var cs []Culprit
	var total float64
	for _, d := range c.Late.ByFunction {
		late += math.Max(float64(d.Delta)/dl, 0)
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
	v.Culprits = keepCulprits(cs, th)
	v.Profiles = []string{c.First.Path, c.Last.Path}
	if len(v.Culprits) == 0 || early <= 0 {
		return 0, 0, 0, 0
	}
	top := v.Culprits[0]
	was := math.Max(before[top.Function], 1)
	now := was + float64(top.Bytes)
	ratio = now / was
	rest := math.Max(late-now, 0) / math.Max(early-was, 1)
	return ratio / math.Max(rest, 1e-3), ratio, math.Max(before[top.Function], 0), now
}
