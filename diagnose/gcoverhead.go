package diagnose

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Thresholds of the gc-overhead rule.
const (
	gcMinRate     = 2.0  // cycles per second
	gcBusyRate    = 5.0  // cycles per second: each pauses the program and turns on the write barrier
	gcMinCPU      = 0.05 // of all CPU, with gcMinRate
	gcAloneCPU    = 0.15 // of all CPU, at any rate
	gcWarnCPU     = 0.10
	gcTargetRate  = 1.0 // what the advice aims for, at most, in cycles per second
	gcTargetShare = 0.1 // ... or this share of the current rate, whichever is lower
	gcBudgetUse   = 0.9 // the advice keeps RSS under this share of the budget
	gcMaxGOGC     = 10000
	// gcMinCores: below this much CPU (cores), a GC that also runs less than gcMinRate times a
	// second costs nothing worth tuning (see gcIdle). It is kept low: the GC's share of the
	// process's CPU is what does not depend on the load or the machine's speed.
	gcMinCores = 0.01
)

// gcOverhead reports a GC that runs often and costs CPU while memory is available, models
// the pacer, and recommends GOMEMLIMIT and GOGC with the predicted effect. GC CPU is judged
// against the process's own CPU time from every vantage point (gctrace, runtime/metrics, or
// MemStats with the process's start time), else against GOMAXPROCS x wall time.
func gcOverhead(in *input) outcome {
	fs, sum := in.f, in.f.Summary
	if fs.GCCycles.Len() < 2 {
		return cannot(KindGCOverhead, 0, "GC cycles were not counted: %s", fs.Gaps[facts.GapGC])
	}
	if !fs.GC.CPUKnown {
		if sum.GCPerSecond >= gcMinRate {
			return gcRateOnly(in)
		}
		return outcome{}
	}
	cores := fs.GC.Cores
	if gcIdle(fs, sum) || !(sum.GCPerSecond >= gcMinRate && sum.GCCPUFraction >= gcMinCPU || sum.GCCPUFraction >= gcAloneCPU) {
		return outcome{}
	}
	m, ok := gcModelOf(fs.GC, fs.Pacer, sum)
	if !ok {
		in.notef("gc-overhead: the GC runs %.1f/s but the live heap or the allocation rate is unknown: no advice", sum.GCPerSecond)
		return outcome{}
	}
	f := Finding{
		Kind:       KindGCOverhead,
		Severity:   Info,
		Confidence: Confirmed,
		Evidence: map[string]float64{
			"gc_per_second":             sum.GCPerSecond,
			"gc_cpu_fraction":           sum.GCCPUFraction,
			"gc_cpu_cores":              cores,
			"gc_assist_fraction":        sum.GCAssistFraction,
			"alloc_bytes_per_second":    m.alloc,
			"live_heap_bytes":           m.now.live,
			"scan_stacks_globals_bytes": m.now.scan,
			"gogc_current":              m.now.gogc,
			"model_gc_per_second_now":   m.rateNow,
			"model_heap_goal_bytes_now": m.now.goal(),
		},
		Start: fs.Start, End: fs.End,
	}
	// A GC rate needs cycles to be measured: few cycles over a short span are a hint.
	if n := sum.GCCount; n < gcMinCycles || fs.GCCycles.Span() < gcMinSpan {
		f.Confidence = Suspected
		f.WatchMoreSeconds = math.Max(gcMinSpan.Seconds()-fs.GCCycles.Span().Seconds(), float64(gcMinCycles-int(min(n, gcMinCycles)))/math.Max(sum.GCPerSecond, 0.1))
	}
	// A warning needs a GC that touches the service: frequent cycles, or mark assists that
	// stall its goroutines. A large share of a light process's CPU at a calm rate (the GC
	// marking a big heap for a service that does little else) costs little and hurts no
	// request: it is said, as information.
	// The CPU share must clear the line even at the low end of its correction for a busy
	// machine, unless the GC runs gcBusyRate times a second: then it is busy by any measure.
	share := gcShareSure(sum)
	if sum.GCPerSecond >= gcBusyRate {
		share = sum.GCCPUFraction
	}
	if sum.GCPerSecond >= gcMinRate && share >= gcWarnCPU || sum.GCAssistFraction >= 0.25 && sum.GCPerSecond >= gcMinRate {
		f.Severity = Warning
	}
	rec, fits := m.recommend(sum.GCPerSecond, fs.Budget, gcBudgetUse)
	if !fits {
		f.Severity = Info
		f.Title = fmt.Sprintf("the GC runs %.1f times per second because memory is tight", sum.GCPerSecond)
		f.Detail = fmt.Sprintf("The GC uses %s of the CPU, but the live heap (%s) leaves little room under the memory budget (%s): "+
			"raising GOGC would not fit. Cut the allocation rate (%s/s) instead: see the allocation hotspots.",
			pct(sum.GCCPUFraction), bytesStr(m.now.live), bytesStr(float64(fs.Budget)), bytesStr(m.alloc))
		return found(f)
	}
	m.explain(&f, sum, rec, fs.Budget)
	return found(f)
}

// contentionError is how far off the measured CPU contention may be (as a share of the
// runnable time): the threads' waits are sampled with the process's CPU, not with each GC.
const contentionError = 0.1

// gcShareSure is the GC's share of the CPU as low as it may be, given that its correction for
// a busy machine is uncertain: a GC measured at 12% of the CPU after removing 65% of its wall
// time as waits may be 9%. A warning rests on this; on a quiet machine it is the share itself.
func gcShareSure(sum Summary) float64 {
	c := sum.CPUContention
	if c <= 0 || c >= 1 {
		return sum.GCCPUFraction
	}
	return sum.GCCPUFraction * math.Max(0, 1-c-contentionError) / (1 - c)
}

// gcIdle reports a GC with nothing worth tuning: it runs less than gcMinRate times a second
// and uses less than gcMinCores. Either alone is a busy service's GC: absolute CPU depends on
// the load and the machine's speed, and a light load with frequent cycles scales with traffic.
func gcIdle(fs *facts.Facts, sum Summary) bool {
	return fs.GC.Cores < gcMinCores && sum.GCPerSecond < gcMinRate
}

// gcRateOnly judges a frequent GC whose CPU cost was not measured (Prometheus's default Go
// metrics, for one): a suspicion at most, with the pacer model's advice when the live heap
// and the allocation rate are known, and what would measure the cost.
func gcRateOnly(in *input) outcome {
	fs, sum := in.f, in.f.Summary
	why := fs.Gaps[facts.GapGCCPU]
	m, ok := gcModelOf(fs.GC, fs.Pacer, sum)
	if !ok {
		return cannot(KindGCOverhead, 0, "the GC runs %.1f times per second but its CPU cost is unknown: %s", sum.GCPerSecond, why)
	}
	f := Finding{
		Kind: KindGCOverhead, Severity: Info, Confidence: Suspected,
		Evidence: map[string]float64{
			"gc_per_second":           sum.GCPerSecond,
			"alloc_bytes_per_second":  m.alloc,
			"live_heap_bytes":         m.now.live,
			"gogc_current":            m.now.gogc,
			"model_gc_per_second_now": m.rateNow,
		},
		Start: fs.Start, End: fs.End,
	}
	if rec, fits := m.recommend(sum.GCPerSecond, fs.Budget, gcBudgetUse); fits {
		m.explain(&f, sum, rec, fs.Budget)
	}
	f.Title = fmt.Sprintf("the GC runs %.1f times per second on a %s live heap; its CPU cost was not measured", sum.GCPerSecond, bytesStr(m.now.live))
	f.Detail = fmt.Sprintf("The GC's CPU time is not in this data (%s), so how much the cycles cost cannot be told: "+
		"at this rate they often take a tenth of the CPU or more, with mark assists slowing requests. ", why) + f.Detail
	f.Advice = append([]string{"Measure the GC's CPU before tuning: memdoctor watch (gctrace through run, or the agent) or the opt-in runtime/metrics GC CPU classes confirm or clear this."}, f.Advice...)
	return found(f)
}

// gcMinCycles and gcMinSpan: a GC rate measured over fewer cycles, or a shorter span, is a
// suspicion.
const (
	gcMinCycles = 10
	gcMinSpan   = 10 * time.Second
)

// gcModel is the pacer as measured, calibrated against the measured GC rate.
type gcModel struct {
	now       pacer
	alloc     float64 // bytes per second
	outside   float64 // resident memory outside Go (non-Go, files)
	rateNow   float64 // GC cycles per second the model predicts for the current settings
	calibrate float64 // measured over modelled, within [0.5, 2]
	rssPeak   float64 // the peak RSS measured
}

func gcModelOf(gc facts.GC, p facts.Pacer, sum Summary) (gcModel, bool) {
	live, alloc := gc.MedianLive, gc.AllocRate
	if live <= 0 || alloc <= 0 {
		return gcModel{}, false
	}
	gogc := p.GOGC
	if gogc == 0 {
		gogc = 100
	}
	m := gcModel{
		now:   pacer{live: live, scan: p.ScanBytes, gogc: gogc, limit: p.GOMemLimit, nonHeap: p.NonHeap},
		alloc: alloc, outside: p.Outside, calibrate: 1, rssPeak: float64(sum.RSSPeakBytes),
	}
	m.rateNow = m.now.gcRate(alloc)
	if m.rateNow > 0 && !math.IsInf(m.rateNow, 0) {
		m.calibrate = math.Min(math.Max(sum.GCPerSecond/m.rateNow, 0.5), 2)
	}
	return m, true
}

// recommend picks settings with enough room above the live heap for the target GC rate,
// capped by a memory limit that keeps RSS within share of the budget. fits is false when the
// budget leaves no such room.
func (m gcModel) recommend(gcPerSecond float64, budget uint64, share float64) (rec pacer, fits bool) {
	live, nonHeap := m.now.live, m.now.nonHeap
	room := m.alloc / math.Min(gcTargetRate, gcTargetShare*gcPerSecond)
	if budget == 0 {
		// No budget: do not let the advice multiply memory use; grow at most to four times
		// today's peak resident memory (or 64 MiB).
		room = math.Min(room, math.Max(4*m.rssPeak, 64<<20)-live-nonHeap-m.outside)
	}
	rec = pacer{live: live, scan: m.now.scan, nonHeap: nonHeap, gogc: math.Min(m.now.gogcFor(room), gcMaxGOGC)}
	if budget > 0 {
		rec.limit = math.Floor((share*float64(budget)-m.outside)/(1<<20)) * (1 << 20)
		if rec.limit < 1.5*(live+nonHeap) {
			return rec, false
		}
		rec.gogc = math.Min(rec.gogc, rec.gogcFor(rec.goal()-live)) // no point beyond the limit
	}
	rec.gogc = math.Max(100, roundDown(rec.gogc, 50))
	if m.now.gogc > rec.gogc {
		rec.gogc = m.now.gogc
	}
	return rec, true
}

// explain fills the finding's advice_env, predictions and text for a recommendation.
func (m gcModel) explain(f *Finding, sum Summary, rec pacer, budget uint64) {
	live := m.now.live
	after := rec.gcRate(m.alloc) * m.calibrate
	goalAfter := rec.goal()
	rssAfter := goalAfter + rec.nonHeap + m.outside
	f.AdviceEnv = map[string]string{"GOGC": strconv.Itoa(int(rec.gogc))}
	f.Evidence["gogc_recommended"] = rec.gogc
	f.Evidence["predicted_gc_per_second_before"] = m.rateNow * m.calibrate
	f.Evidence["predicted_gc_per_second_after"] = after
	f.Evidence["predicted_heap_peak_bytes_before"] = m.now.goal()
	f.Evidence["predicted_heap_peak_bytes_after"] = goalAfter
	f.Evidence["predicted_rss_peak_bytes_after"] = rssAfter
	f.Evidence["model_calibration_ratio"] = m.calibrate
	if rec.limit > 0 {
		f.AdviceEnv["GOMEMLIMIT"] = mib(rec.limit)
		f.Evidence["gomemlimit_bytes_recommended"] = rec.limit
		f.Evidence["memory_budget_bytes"] = float64(budget)
	}
	env := envString(f.AdviceEnv)
	f.Title = fmt.Sprintf("the GC runs %.1f times per second on a %s live heap, using %s of the CPU", sum.GCPerSecond, bytesStr(live), pct(sum.GCCPUFraction))
	f.Detail = fmt.Sprintf("The program allocates %s/s and the GC goal leaves only %s of room above the live heap, so the GC runs every %s. "+
		"The pacer model (goal = live + (live + stacks + globals) x GOGC/100; cycles/s = allocation rate / (goal - live)) predicts %.1f/s now, measured %.1f/s. ",
		bytesStr(m.alloc), bytesStr(m.now.goal()-live), humanDuration(1/sum.GCPerSecond), m.rateNow, sum.GCPerSecond)
	if sum.GCAssistFraction > 0 {
		f.Detail += fmt.Sprintf("%s of the GC's CPU is mark assists taken from allocating goroutines: that is request latency. ", pct(sum.GCAssistFraction))
	}
	f.Detail += fmt.Sprintf("With %s the GC should run about %.2f/s (%s fewer cycles) with a heap of at most about %s.",
		env, after, pct(1-after/math.Max(sum.GCPerSecond, 1e-9)), bytesStr(goalAfter))
	f.Advice = append(f.Advice, fmt.Sprintf("Run with %s: the heap may grow to about %s (RSS about %s) and the GC runs about %.2f times per second instead of %.1f.",
		env, bytesStr(goalAfter), bytesStr(rssAfter), after, sum.GCPerSecond))
	if rec.limit > 0 {
		f.Advice = append(f.Advice, fmt.Sprintf("GOMEMLIMIT=%s leaves %s of the %s budget for memory outside the Go heap and headroom; it is the modern replacement for a heap ballast: the GC lets the heap grow to it and works harder only near it.",
			mib(rec.limit), bytesStr(float64(budget)-rec.limit), bytesStr(float64(budget))))
	} else {
		f.Advice = append(f.Advice, "No memory budget is known (no --memory-budget, no cgroup limit): pass --memory-budget to get a GOMEMLIMIT that caps the heap safely; GOGC alone lets the heap grow with the live heap.")
	}
	f.Advice = append(f.Advice, "Allocating less lowers GC work in proportion: see the allocation hotspots.")
}

func roundDown(v, step float64) float64 { return math.Floor(v/step) * step }

func envString(env map[string]string) string {
	var parts []string
	for _, k := range []string{"GOMEMLIMIT", "GOGC"} {
		if v, ok := env[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
