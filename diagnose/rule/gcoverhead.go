package rule

import (
	"math"

	"github.com/memdoctor/memdoctor/facts"
)

// GCCase is a GC that runs often, with the pacer model's figures and, when memory allows, its
// advice.
type GCCase struct {
	Summary facts.Summary
	Cores   float64
	// RateOnly is true when the GC's CPU was not measured: only its rate is known.
	RateOnly bool
	// The pacer model, as measured: the median live heap, the stacks and globals it scans,
	// GOGC, the allocation rate, the GC rate it predicts and its heap goal.
	Live, Scan, GOGC, Alloc, RateNow, GoalNow float64
	// Tight is true when the budget leaves no room to raise GOGC; Advice is the settings
	// advised otherwise (nil when none).
	Tight  bool
	Advice *GCAdvice
	Budget uint64
}

// GCAdvice is the settings the pacer model advises and what it predicts for them.
type GCAdvice struct {
	GOGC  float64
	Limit float64 // GOMEMLIMIT in bytes; 0 = none (no budget)
	// The GC rate before and after, the heap goal before and after, and RSS after.
	RateBefore, RateAfter           float64
	HeapBefore, HeapAfter, RSSAfter float64
	Calibration                     float64
}

// gcOverhead reports a GC that runs often and costs CPU while memory is available, models
// the pacer, and recommends GOMEMLIMIT and GOGC with the predicted effect. GC CPU is judged
// against the process's own CPU time from every vantage point (gctrace, runtime/metrics, or
// MemStats with the process's start time), else against GOMAXPROCS x wall time.
func gcOverhead(fs *facts.Facts, th *Thresholds) outcome {
	gt := &th.GC
	sum := fs.Summary
	if fs.GCCycles.Len() < 2 {
		return cannot(KindGCOverhead, WhyNeverMeasured, 0)
	}
	// No cycle the pacer started in the window: nothing that GOGC or GOMEMLIMIT would change.
	// A cycle forced by runtime.GC or debug.FreeOSMemory (memdoctor's own heap?gc=1 and
	// goroutineleak fetches among them) is not the pacer's; whatever a GC CPU share says then
	// is the start-up's or those cycles'.
	if sum.GCPerSecond <= 0 {
		return outcome{}
	}
	if !fs.GC.CPUKnown {
		if sum.GCPerSecond >= gt.MinRate {
			return gcRateOnly(fs, th)
		}
		return outcome{}
	}
	if gcIdle(fs, sum, gt) || !(sum.GCPerSecond >= gt.MinRate && sum.GCCPUFraction >= gt.MinCPU || sum.GCCPUFraction >= gt.AloneCPU) {
		return outcome{}
	}
	m, ok := gcModelOf(fs.GC, fs.Pacer, sum)
	if !ok {
		return outcome{notes: []Note{{Kind: KindGCOverhead, What: NoteNoModel, Rate: sum.GCPerSecond}}}
	}
	c := gcCase(fs, m)
	v := Verdict{Kind: KindGCOverhead, Severity: Info, Confidence: Confirmed, Start: fs.Start, End: fs.End, Case: c}
	// A GC rate needs cycles to be measured: few cycles over a short span are a hint.
	if n := sum.GCCount; n < gt.MinCycles || fs.GCCycles.Span() < gt.MinSpan {
		v.Confidence = Suspected
		v.WatchMoreSeconds = math.Max(gt.MinSpan.Seconds()-fs.GCCycles.Span().Seconds(), float64(gt.MinCycles-min(n, gt.MinCycles))/math.Max(sum.GCPerSecond, 0.1))
	}
	// A warning needs a GC that touches the service: frequent cycles, or mark assists that
	// stall its goroutines. A large share of a light process's CPU at a calm rate (the GC
	// marking a big heap for a service that does little else) costs little and hurts no
	// request: it is said, as information.
	// The CPU share must clear the line even at the low end of its correction for a busy
	// machine, unless the GC runs BusyRate times a second: then it is busy by any measure.
	share := gcShareSure(sum, gt)
	if sum.GCPerSecond >= gt.BusyRate {
		share = sum.GCCPUFraction
	}
	if sum.GCPerSecond >= gt.MinRate && share >= gt.WarnCPU || sum.GCAssistFraction >= gt.AssistWarn && sum.GCPerSecond >= gt.MinRate {
		v.Severity = Warning
	}
	rec, fits := m.recommend(sum.GCPerSecond, fs.Budget, gt.BudgetUse, gt)
	if !fits {
		v.Severity, c.Tight = Info, true
		return outcome{verdicts: []Verdict{v}}
	}
	c.Advice = m.advise(rec)
	return outcome{verdicts: []Verdict{v}}
}

func gcCase(fs *facts.Facts, m gcModel) *GCCase {
	return &GCCase{
		Summary: fs.Summary, Cores: fs.GC.Cores, Live: m.now.live, Scan: m.now.scan, GOGC: m.now.gogc,
		Alloc: m.alloc, RateNow: m.rateNow, GoalNow: m.now.goal(), Budget: fs.Budget,
	}
}

// advise is the model's prediction for a recommendation.
func (m gcModel) advise(rec pacer) *GCAdvice {
	goalAfter := rec.goal()
	return &GCAdvice{
		GOGC: rec.gogc, Limit: rec.limit,
		RateBefore: m.rateNow * m.calibrate, RateAfter: rec.gcRate(m.alloc) * m.calibrate,
		HeapBefore: m.now.goal(), HeapAfter: goalAfter, RSSAfter: goalAfter + rec.nonHeap + m.outside,
		Calibration: m.calibrate,
	}
}

// gcShareSure is the GC's share of the CPU as low as it may be, given that its correction for
// a busy machine is uncertain: a GC measured at 12% of the CPU after removing 65% of its wall
// time as waits may be 9%. A warning rests on this; on a quiet machine it is the share itself.
func gcShareSure(sum facts.Summary, th *GC) float64 {
	c := sum.CPUContention
	if c <= 0 || c >= 1 {
		return sum.GCCPUFraction
	}
	return sum.GCCPUFraction * math.Max(0, 1-c-th.ContentionError) / (1 - c)
}

// gcIdle reports a GC with nothing worth tuning: it runs less than MinRate times a second and
// uses less than MinCores. Either alone is a busy service's GC: absolute CPU depends on the
// load and the machine's speed, and a light load with frequent cycles scales with traffic.
func gcIdle(fs *facts.Facts, sum facts.Summary, th *GC) bool {
	return fs.GC.Cores < th.MinCores && sum.GCPerSecond < th.MinRate
}

// gcRateOnly judges a frequent GC whose CPU cost was not measured (Prometheus's default Go
// metrics, for one): a suspicion at most, with the pacer model's advice when the live heap
// and the allocation rate are known.
func gcRateOnly(fs *facts.Facts, th *Thresholds) outcome {
	sum := fs.Summary
	m, ok := gcModelOf(fs.GC, fs.Pacer, sum)
	if !ok {
		return outcome{unjudged: &Unjudged{Kind: KindGCOverhead, Why: WhyCPUUnknown, Value: sum.GCPerSecond}}
	}
	c := gcCase(fs, m)
	c.RateOnly = true
	if rec, fits := m.recommend(sum.GCPerSecond, fs.Budget, th.GC.BudgetUse, &th.GC); fits {
		c.Advice = m.advise(rec)
	}
	return outcome{verdicts: []Verdict{{Kind: KindGCOverhead, Severity: Info, Confidence: Suspected, Start: fs.Start, End: fs.End, Case: c}}}
}
