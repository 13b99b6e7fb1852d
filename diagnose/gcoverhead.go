package diagnose

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

func init() { register(KindGCOverhead, gcOverhead) }

// Thresholds of the gc-overhead rule.
const (
	gcMinRate     = 2.0  // cycles per second
	gcMinCPU      = 0.05 // of all CPU, with gcMinRate
	gcAloneCPU    = 0.15 // of all CPU, at any rate
	gcWarnCPU     = 0.10
	gcTargetRate  = 1.0 // what the advice aims for, at most, in cycles per second
	gcTargetShare = 0.1 // ... or this share of the current rate, whichever is lower
	gcBudgetUse   = 0.9 // the advice keeps RSS under this share of the budget
	gcMaxGOGC     = 10000
	// gcMinCores: below this much CPU (cores) the GC costs nothing worth tuning.
	gcMinCores = 0.03
)

// gcOverhead reports a GC that runs often and costs CPU while memory is available, models
// the pacer, and recommends GOMEMLIMIT and GOGC with the predicted effect.
func gcOverhead(in *Input) []Finding {
	sum := in.Summary()
	cores := in.gcCores()
	if cores < gcMinCores || !(sum.GCPerSecond >= gcMinRate && sum.GCCPUFraction >= gcMinCPU || sum.GCCPUFraction >= gcAloneCPU) {
		return nil
	}
	m, ok := in.gcModel(sum)
	if !ok {
		in.notef("gc-overhead: the GC runs %.1f/s but the live heap or the allocation rate is unknown: no advice", sum.GCPerSecond)
		return nil
	}
	f := Finding{
		Kind:     KindGCOverhead,
		Severity: Info,
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
		Start: in.Start, End: in.End,
	}
	if sum.GCCPUFraction >= gcWarnCPU || sum.GCAssistFraction >= 0.25 && sum.GCPerSecond >= gcMinRate {
		f.Severity = Warning
	}
	rec, fits := m.recommend(sum, in.Budget)
	if !fits {
		f.Severity = Info
		f.Title = fmt.Sprintf("the GC runs %.1f times per second because memory is tight", sum.GCPerSecond)
		f.Detail = fmt.Sprintf("The GC uses %s of the CPU, but the live heap (%s) leaves little room under the memory budget (%s): "+
			"raising GOGC would not fit. Cut the allocation rate (%s/s) instead: see the allocation hotspots.",
			pct(sum.GCCPUFraction), bytesStr(m.now.live), bytesStr(float64(in.Budget)), bytesStr(m.alloc))
		return []Finding{f}
	}
	m.explain(&f, sum, rec, in.Budget)
	return []Finding{f}
}

// gcModel is the pacer as measured, calibrated against the measured GC rate.
type gcModel struct {
	now       pacer
	alloc     float64 // bytes per second
	outside   float64 // resident memory outside Go (non-Go, files)
	rateNow   float64 // GC cycles per second the model predicts for the current settings
	calibrate float64 // measured over modelled, within [0.5, 2]
}

func (in *Input) gcModel(sum Summary) (gcModel, bool) {
	live := in.medianLive()
	alloc := sum.AllocBytesPerSecond
	if alloc <= 0 {
		alloc = in.gctraceAllocRate()
	}
	if live <= 0 || alloc <= 0 {
		return gcModel{}, false
	}
	scan, nonHeap, outside := in.pacerInputs()
	m := gcModel{
		now:   pacer{live: live, scan: scan, gogc: in.currentGOGC(), limit: in.currentLimit(), nonHeap: nonHeap},
		alloc: alloc, outside: outside, calibrate: 1,
	}
	m.rateNow = m.now.gcRate(alloc)
	if m.rateNow > 0 && !math.IsInf(m.rateNow, 0) {
		m.calibrate = math.Min(math.Max(sum.GCPerSecond/m.rateNow, 0.5), 2)
	}
	return m, true
}

// recommend picks settings with enough room above the live heap for the target GC rate,
// capped by a memory limit that keeps RSS within the budget. fits is false when the budget
// leaves no such room.
func (m gcModel) recommend(sum Summary, budget uint64) (rec pacer, fits bool) {
	live, nonHeap := m.now.live, m.now.nonHeap
	room := m.alloc / math.Min(gcTargetRate, gcTargetShare*sum.GCPerSecond)
	if budget == 0 {
		// No budget: do not let the advice multiply memory use; grow at most to four times
		// today's peak resident memory (or 64 MiB).
		room = math.Min(room, math.Max(4*float64(sum.RSSPeakBytes), 64<<20)-live-nonHeap-m.outside)
	}
	rec = pacer{live: live, scan: m.now.scan, nonHeap: nonHeap, gogc: math.Min(m.now.gogcFor(room), gcMaxGOGC)}
	if budget > 0 {
		rec.limit = math.Floor((gcBudgetUse*float64(budget)-m.outside)/(1<<20)) * (1 << 20)
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

// medianLive is the live heap's median over the window. gctrace truncates to whole MiB, so a
// live heap under 1 MiB reads 0 there: it counts as half a MiB.
func (in *Input) medianLive() float64 {
	live, src := in.LiveHeap()
	m := median(values(between(live, in.Start, in.End)))
	if m == 0 && src == "gctrace" && len(live) > 0 {
		m = 512 << 10
	}
	return m
}

// pacerInputs returns the stacks and globals the GC scans, the runtime's non-heap memory
// (stacks, metadata) and the resident memory outside Go (non-Go, files).
func (in *Input) pacerInputs() (scan, nonHeap, outside float64) {
	var scans []float64
	for _, ev := range in.GC {
		if ev.HasStacksGlobals {
			scans = append(scans, float64(ev.Stacks+ev.Globals))
		}
	}
	for _, g := range in.Go {
		if g.StackScanBytes+g.GlobalsScanBytes > 0 {
			scans = append(scans, float64(g.StackScanBytes+g.GlobalsScanBytes))
		}
	}
	scan = median(scans)
	if len(in.Proc) > 0 {
		b := in.BreakdownAt(in.Proc[len(in.Proc)-1].T, &in.Proc[len(in.Proc)-1].Proc)
		nonHeap = float64(b.StacksBytes + b.RuntimeMetadataBytes)
		outside = float64(b.NonGoBytes + b.FileBytes)
	} else if len(in.Go) > 0 {
		g := in.Go[len(in.Go)-1]
		nonHeap = float64(g.HeapStacksBytes + g.OSStacksBytes + g.MetadataBytes + g.OtherBytes)
	}
	return scan, nonHeap, outside
}

// currentGOGC is the target's GOGC: from the agent, else its environment, else 100.
func (in *Input) currentGOGC() float64 {
	for i := len(in.Go) - 1; i >= 0; i-- {
		if g := in.Go[i].GOGC; g != 0 {
			return float64(g)
		}
	}
	switch v := strings.TrimSpace(in.Session.Manifest.Target.GOGC); {
	case v == "":
		return 100
	case strings.EqualFold(v, "off"):
		return -1
	default:
		if n, err := strconv.Atoi(v); err == nil {
			return float64(n)
		}
	}
	return 100
}

// currentLimit is the target's GOMEMLIMIT in bytes (0 = none or unknown).
func (in *Input) currentLimit() float64 {
	for i := len(in.Go) - 1; i >= 0; i-- {
		if l := in.Go[i].GOMemLimitBytes; l != 0 && l < math.MaxInt64 {
			return float64(l)
		}
	}
	return 0
}

// gctraceAllocRate estimates the allocation rate from gctrace: what the heap grew by
// between one cycle's end (its live heap) and the next cycle's start.
func (in *Input) gctraceAllocRate() float64 {
	if len(in.GC) < 3 {
		return 0
	}
	var total float64
	for i := 1; i < len(in.GC); i++ {
		total += math.Max(0, float64(in.GC[i].HeapStart)-float64(in.GC[i-1].HeapLive))
	}
	span := in.GC[len(in.GC)-1].Time.Sub(in.GC[0].Time).Seconds()
	if span <= 0 {
		return 0
	}
	return total / span
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
