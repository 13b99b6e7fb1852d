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
	live := in.medianLive()
	alloc := sum.AllocBytesPerSecond
	if alloc <= 0 {
		alloc = in.gctraceAllocRate()
	}
	if live <= 0 || alloc <= 0 {
		in.notef("gc-overhead: the GC runs %.1f/s but the live heap or the allocation rate is unknown: no advice", sum.GCPerSecond)
		return nil
	}
	scan, nonHeap, outside := in.pacerInputs()
	gogcNow := in.currentGOGC()
	now := pacer{live: live, scan: scan, gogc: gogcNow, limit: in.currentLimit(), nonHeap: nonHeap}
	modelNow := now.gcRate(alloc)
	k := 1.0 // calibration: measured over modelled
	if modelNow > 0 && !math.IsInf(modelNow, 0) {
		k = math.Min(math.Max(sum.GCPerSecond/modelNow, 0.5), 2)
	}

	f := Finding{
		Kind:     KindGCOverhead,
		Severity: Info,
		Evidence: map[string]float64{
			"gc_per_second":             sum.GCPerSecond,
			"gc_cpu_fraction":           sum.GCCPUFraction,
			"gc_cpu_cores":              cores,
			"gc_assist_fraction":        sum.GCAssistFraction,
			"alloc_bytes_per_second":    alloc,
			"live_heap_bytes":           live,
			"scan_stacks_globals_bytes": scan,
			"gogc_current":              gogcNow,
			"model_gc_per_second_now":   modelNow,
			"model_heap_goal_bytes_now": now.goal(),
		},
		Start: in.Start, End: in.End,
	}
	if sum.GCCPUFraction >= gcWarnCPU || sum.GCAssistFraction >= 0.25 && sum.GCPerSecond >= gcMinRate {
		f.Severity = Warning
	}

	// The recommendation: enough room above the live heap for the target rate, capped by a
	// memory limit that keeps RSS within the budget.
	target := math.Min(gcTargetRate, gcTargetShare*sum.GCPerSecond)
	room := alloc / target
	if in.Budget == 0 {
		// No budget: do not let the advice multiply memory use; grow at most to four times
		// today's peak resident memory (or 64 MiB).
		room = math.Min(room, math.Max(4*float64(sum.RSSPeakBytes), 64<<20)-live-nonHeap-outside)
	}
	rec := pacer{live: live, scan: scan, nonHeap: nonHeap, gogc: math.Min(now.gogcFor(room), gcMaxGOGC)}
	if in.Budget > 0 {
		rec.limit = math.Floor((gcBudgetUse*float64(in.Budget)-outside)/(1<<20)) * (1 << 20)
		if rec.limit < 1.5*(live+nonHeap) {
			f.Severity = Info
			f.Title = fmt.Sprintf("the GC runs %.1f times per second because memory is tight", sum.GCPerSecond)
			f.Detail = fmt.Sprintf("The GC uses %s of the CPU, but the live heap (%s) leaves little room under the memory budget (%s): "+
				"raising GOGC would not fit. Cut the allocation rate (%s/s) instead: see the allocation hotspots.",
				pct(sum.GCCPUFraction), bytesStr(live), bytesStr(float64(in.Budget)), bytesStr(alloc))
			return []Finding{f}
		}
		rec.gogc = math.Min(rec.gogc, rec.gogcFor(rec.goal()-live)) // no point beyond the limit
	}
	rec.gogc = math.Max(100, roundDown(rec.gogc, 50))
	if gogcNow > rec.gogc {
		rec.gogc = gogcNow
	}
	after := rec.gcRate(alloc) * k
	goalAfter := rec.goal()
	f.AdviceEnv = map[string]string{"GOGC": strconv.Itoa(int(rec.gogc))}
	f.Evidence["gogc_recommended"] = rec.gogc
	f.Evidence["predicted_gc_per_second_before"] = modelNow * k
	f.Evidence["predicted_gc_per_second_after"] = after
	f.Evidence["predicted_heap_peak_bytes_before"] = now.goal()
	f.Evidence["predicted_heap_peak_bytes_after"] = goalAfter
	f.Evidence["predicted_rss_peak_bytes_after"] = goalAfter + nonHeap + outside
	f.Evidence["model_calibration_ratio"] = k
	if rec.limit > 0 {
		f.AdviceEnv["GOMEMLIMIT"] = mib(rec.limit)
		f.Evidence["gomemlimit_bytes_recommended"] = rec.limit
		f.Evidence["memory_budget_bytes"] = float64(in.Budget)
	}
	drop := 1 - after/math.Max(sum.GCPerSecond, 1e-9)
	f.Title = fmt.Sprintf("the GC runs %.1f times per second on a %s live heap, using %s of the CPU", sum.GCPerSecond, bytesStr(live), pct(sum.GCCPUFraction))
	f.Detail = fmt.Sprintf("The program allocates %s/s and the GC goal leaves only %s of room above the live heap, so the GC runs every %s. "+
		"The pacer model (goal = live + (live + stacks + globals) x GOGC/100; cycles/s = allocation rate / (goal - live)) predicts %.1f/s now, measured %.1f/s. ",
		bytesStr(alloc), bytesStr(now.goal()-live), humanDuration(1/sum.GCPerSecond), modelNow, sum.GCPerSecond)
	if sum.GCAssistFraction > 0 {
		f.Detail += fmt.Sprintf("%s of the GC's CPU is mark assists taken from allocating goroutines: that is request latency. ", pct(sum.GCAssistFraction))
	}
	f.Detail += fmt.Sprintf("With %s the GC should run about %.2f/s (%s fewer cycles) with a heap of at most about %s.",
		envString(f.AdviceEnv), after, pct(drop), bytesStr(goalAfter))
	f.Advice = append(f.Advice, fmt.Sprintf("Run with %s: the heap may grow to about %s (RSS about %s) and the GC runs about %.2f times per second instead of %.1f.",
		envString(f.AdviceEnv), bytesStr(goalAfter), bytesStr(goalAfter+nonHeap+outside), after, sum.GCPerSecond))
	if rec.limit > 0 {
		f.Advice = append(f.Advice, fmt.Sprintf("GOMEMLIMIT=%s leaves %s of the %s budget for memory outside the Go heap and headroom; it is the modern replacement for a heap ballast: the GC lets the heap grow to it and works harder only near it.",
			mib(rec.limit), bytesStr(float64(in.Budget)-rec.limit), bytesStr(float64(in.Budget))))
	} else {
		f.Advice = append(f.Advice, "No memory budget is known (no --memory-budget, no cgroup limit): pass --memory-budget to get a GOMEMLIMIT that caps the heap safely; GOGC alone lets the heap grow with the live heap.")
	}
	f.Advice = append(f.Advice, "Allocating less lowers GC work in proportion: see the allocation hotspots.")
	return []Finding{f}
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
