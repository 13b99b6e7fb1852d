package words

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

func gcOverhead(f *Finding, c *rule.GCCase, fs *facts.Facts) {
	sum := c.Summary
	if c.RateOnly {
		gcRateOnly(f, c, fs.Gaps[facts.GapGCCPU])
		return
	}
	f.Evidence = map[string]float64{
		"gc_per_second":             sum.GCPerSecond,
		"gc_cpu_fraction":           sum.GCCPUFraction,
		"gc_cpu_cores":              c.Cores,
		"gc_assist_fraction":        sum.GCAssistFraction,
		"alloc_bytes_per_second":    c.Alloc,
		"live_heap_bytes":           c.Live,
		"scan_stacks_globals_bytes": c.Scan,
		"gogc_current":              c.GOGC,
		"model_gc_per_second_now":   c.RateNow,
		"model_heap_goal_bytes_now": c.GoalNow,
	}
	if c.Tight {
		f.Title = fmt.Sprintf("the GC runs %.1f times per second because memory is tight", sum.GCPerSecond)
		f.Detail = fmt.Sprintf("The GC uses %s of the CPU, but the live heap (%s) leaves little room under the memory budget (%s): "+
			"raising GOGC would not fit. Cut the allocation rate (%s/s) instead: see the allocation hotspots.",
			pct(sum.GCCPUFraction), bytesStr(c.Live), bytesStr(float64(c.Budget)), bytesStr(c.Alloc))
		return
	}
	gcAdvice(f, c)
}

// gcRateOnly says a frequent GC whose CPU cost was not measured, and what would measure it.
func gcRateOnly(f *Finding, c *rule.GCCase, why string) {
	sum := c.Summary
	f.Evidence = map[string]float64{
		"gc_per_second":           sum.GCPerSecond,
		"alloc_bytes_per_second":  c.Alloc,
		"live_heap_bytes":         c.Live,
		"gogc_current":            c.GOGC,
		"model_gc_per_second_now": c.RateNow,
	}
	if c.Advice != nil {
		gcAdvice(f, c)
	}
	f.Title = fmt.Sprintf("the GC runs %.1f times per second on a %s live heap; its CPU cost was not measured", sum.GCPerSecond, bytesStr(c.Live))
	f.Detail = fmt.Sprintf("The GC's CPU time is not in this data (%s), so how much the cycles cost cannot be told: "+
		"at this rate they often take a tenth of the CPU or more, with mark assists slowing requests. ", why) + f.Detail
	f.Advice = append([]string{"Measure the GC's CPU before tuning: memdoctor watch (gctrace through run, or the agent) or the opt-in runtime/metrics GC CPU classes confirm or clear this."}, f.Advice...)
}

// gcAdvice says the pacer model's advice: advice_env, predictions and text.
func gcAdvice(f *Finding, c *rule.GCCase) {
	sum, a := c.Summary, c.Advice
	live, budget := c.Live, c.Budget
	f.AdviceEnv = map[string]string{"GOGC": strconv.Itoa(int(a.GOGC))}
	f.Evidence["gogc_recommended"] = a.GOGC
	f.Evidence["predicted_gc_per_second_before"] = a.RateBefore
	f.Evidence["predicted_gc_per_second_after"] = a.RateAfter
	f.Evidence["predicted_heap_peak_bytes_before"] = a.HeapBefore
	f.Evidence["predicted_heap_peak_bytes_after"] = a.HeapAfter
	f.Evidence["predicted_rss_peak_bytes_after"] = a.RSSAfter
	f.Evidence["model_calibration_ratio"] = a.Calibration
	if a.Limit > 0 {
		f.AdviceEnv["GOMEMLIMIT"] = mib(a.Limit)
		f.Evidence["gomemlimit_bytes_recommended"] = a.Limit
		f.Evidence["memory_budget_bytes"] = float64(budget)
	}
	env := envString(f.AdviceEnv)
	f.Title = fmt.Sprintf("the GC runs %.1f times per second on a %s live heap, using %s of the CPU", sum.GCPerSecond, bytesStr(live), pct(sum.GCCPUFraction))
	f.Detail = fmt.Sprintf("The program allocates %s/s and the GC goal leaves only %s of room above the live heap, so the GC runs every %s. "+
		"The pacer model (goal = live + (live + stacks + globals) x GOGC/100; cycles/s = allocation rate / (goal - live)) predicts %.1f/s now, measured %.1f/s. ",
		bytesStr(c.Alloc), bytesStr(c.GoalNow-live), humanDuration(1/sum.GCPerSecond), c.RateNow, sum.GCPerSecond)
	if sum.GCAssistFraction > 0 {
		f.Detail += fmt.Sprintf("%s of the GC's CPU is mark assists taken from allocating goroutines: that is request latency. ", pct(sum.GCAssistFraction))
	}
	after := a.RateAfter
	f.Detail += fmt.Sprintf("With %s the GC should run about %.2f/s (%s fewer cycles) with a heap of at most about %s.",
		env, after, pct(1-after/math.Max(sum.GCPerSecond, 1e-9)), bytesStr(a.HeapAfter))
	f.Advice = append(f.Advice, fmt.Sprintf("Run with %s: the heap may grow to about %s (RSS about %s) and the GC runs about %.2f times per second instead of %.1f.",
		env, bytesStr(a.HeapAfter), bytesStr(a.RSSAfter), after, sum.GCPerSecond))
	if a.Limit > 0 {
		f.Advice = append(f.Advice, fmt.Sprintf("GOMEMLIMIT=%s leaves %s of the %s budget for memory outside the Go heap and headroom; it is the modern replacement for a heap ballast: the GC lets the heap grow to it and works harder only near it.",
			mib(a.Limit), bytesStr(float64(budget)-a.Limit), bytesStr(float64(budget))))
	} else {
		f.Advice = append(f.Advice, "No memory budget is known (no --memory-budget, no cgroup limit): pass --memory-budget to get a GOMEMLIMIT that caps the heap safely; GOGC alone lets the heap grow with the live heap.")
	}
	f.Advice = append(f.Advice, "Allocating less lowers GC work in proportion: see the allocation hotspots.")
}

func envString(env map[string]string) string {
	var parts []string
	for _, k := range []string{"GOMEMLIMIT", "GOGC"} {
		if v, ok := env[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}
