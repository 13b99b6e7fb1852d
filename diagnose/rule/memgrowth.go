package rule

import (
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// MemoryCase is resident memory (or, for a remote process, what the Go runtime holds) that
// grows for good, or rose steeply and stayed (Step).
type MemoryCase struct {
	// Runtime is true when the memory judged is what the Go runtime holds, not RSS.
	Runtime bool
	Src     facts.Source
	Rise    Rise
	// Step is set for a step: memory that rose steeply and has not come back.
	Step *MemoryStep
	// Parts is what each part of memory grew, largest first (empty when unknown); Part the
	// part that grew most, when it grew.
	Parts []facts.Part
	Part  string
	// Sites is what was said about the growing sites, when the live heap (or garbage, for a
	// step) grew most.
	Sites  *LeakSitesSaid
	Budget *BudgetTime
}

// MemoryStep is a step of resident memory that stopped rising.
type MemoryStep struct {
	First, Low float64
	// LastQuarter is what the last quarter of the readings spans; Rose when the memory passed
	// half the step, from the window's start; Window the window's length.
	LastQuarter, Rose time.Duration
	Window            float64
}

// memoryGrowth reports resident memory (or, for a remote process, what the Go runtime
// holds) that grows for good, whichever part of it grows: whatever grows without bound is a
// finding, even when no other rule's shape matched. It names the part that grew most; the
// consistency pass drops it when another finding already explains that part.
func memoryGrowth(fs *facts.Facts, th *Thresholds) outcome {
	r := &fs.Resident
	s := &r.Series
	if s.Empty() {
		return cannot(KindMemoryGrowth, WhyNeverMeasured, 0)
	}
	pts := r.Floor
	g := judgeGrowth(pts, th.Memory.Limits, 0, &th.Trend)
	if !g.judged {
		return outcome{unjudged: &Unjudged{Kind: KindMemoryGrowth, Why: WhyTooFew, WatchMoreSeconds: g.watchMore.Seconds(), N: s.Len(), Span: s.Span(), Need: th.Memory.Limits.MinSpan}}
	}
	if g.conf == "" {
		return memoryStep(fs, th)
	}
	parts := r.FloorParts
	if len(parts) > 0 && parts[0].Name == facts.PartGarbage && facts.PartBytes(parts, facts.PartLive) < th.Memory.WarmupLive*g.grew() {
		// The heap in use rose toward its GC goal while the live heap stayed: a process
		// warming up to its steady state, bounded by the goal. Not growth for good.
		return outcome{}
	}
	var o outcome
	c := &MemoryCase{Runtime: r.Runtime, Src: s.Src, Rise: g.rise(&th.Trend), Parts: parts}
	v := Verdict{
		Kind: KindMemoryGrowth, Severity: Warning, Confidence: g.conf, WatchMoreSeconds: g.watchMore.Seconds(),
		Start: pts[0].T, End: pts[len(pts)-1].T, Case: c,
	}
	if len(parts) > 0 && parts[0].Bytes > 0 {
		c.Part = parts[0].Name
		if c.Part == facts.PartLive {
			sites := leakCulprits(fs, th, &v, &o)
			c.Sites = &sites
		}
	}
	c.Budget = timeToBudget(fs, th, &v, g.perMinute()/60/2, 0)
	o.verdicts = append(o.verdicts, v)
	return o
}

// memoryStep reports resident memory that rose steeply in the window and has not come back:
// not growth for good (it stopped), so the growth rule says nothing, yet the process now
// needs several times the memory it started with, start-up included. Whatever holds it (a
// burst the GC has not collected yet, a cache that warmed, memory kept), it sets what the
// process must be given. It is judged on the settled readings (the binary's own start-up
// excluded), from the lowest of the first few to the lowest of the last quarter.
func memoryStep(fs *facts.Facts, th *Thresholds) outcome {
	pts := fs.Resident.Settled
	n := len(pts)
	if n < 8 {
		return outcome{}
	}
	first := slices.Min(facts.Values(pts[:min(3, n/4)])) // a step can be over by the second reading
	lastQ := pts[n-max(n/4, 2):]
	low := math.Inf(1)
	for _, p := range lastQ {
		low = math.Min(low, p.V)
	}
	if first <= 0 || low < th.Memory.StepMinRatio*first || low-first < th.Memory.StepMinBytes {
		return outcome{}
	}
	// When it rose: the first reading past half the step.
	rose := pts[0].T
	for _, p := range pts {
		if p.V >= first+(low-first)/2 {
			rose = p.T
			break
		}
	}
	var o outcome
	r := &fs.Resident
	c := &MemoryCase{
		Runtime: r.Runtime, Src: r.Series.Src, Parts: r.SettledParts,
		Step: &MemoryStep{First: first, Low: low, LastQuarter: lastQ[len(lastQ)-1].T.Sub(lastQ[0].T), Rose: rose.Sub(fs.Start), Window: fs.Seconds()},
	}
	v := Verdict{Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed, Start: pts[0].T, End: pts[n-1].T, Case: c}
	if parts := r.SettledParts; len(parts) > 0 && parts[0].Bytes > 0 {
		c.Part = parts[0].Name
		if c.Part == facts.PartLive || c.Part == facts.PartGarbage {
			sites := leakCulprits(fs, th, &v, &o)
			c.Sites = &sites
		}
	}
	o.verdicts = append(o.verdicts, v)
	return o
}
