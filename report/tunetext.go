package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/memdoctor/memdoctor/tune"
)

// TuneText writes a tuning experiment: the model calibrated on the baseline, one row per
// setting with the model's prediction against what its run measured (and the error), the
// choice and why, and what the experiment cannot promise about production.
func TuneText(w io.Writer, r *tune.Result, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw, color: opts.Color}
	line := (1 - r.SafetyMargin) * float64(r.MemoryBudgetBytes)
	p.f("%s  memory budget %s: a setting is kept when its peak RSS stays within %.0f%% of it (%s)\n",
		p.paint(ansiBold, "memdoctor tune"), Bytes(r.MemoryBudgetBytes), (1-r.SafetyMargin)*100, Bytes(uint64(line)))
	if m := r.Model; m != nil {
		p.f("  model from the baseline: live heap %s, allocation %s/s, runtime's other memory %s, outside Go %s; measured GC rate %.2f/s is %.2f times the model's\n",
			Bytes(uint64(m.LiveBytes)), Bytes(uint64(m.AllocBytesPerSecond)), Bytes(uint64(m.NonHeapBytes)), Bytes(uint64(m.OutsideBytes)), m.GCPerSecond, m.Calibration)
	}
	p.f("\n%-32s %21s %8s %8s %23s %8s\n", "", "GC cycles/s", "GC CPU", "assists", "peak RSS", "")
	p.f("%-32s %10s %10s %8s %8s %11s %11s %8s\n", "setting", "predicted", "measured", "", "", "predicted", "measured", "budget")
	rows := append([]tune.Candidate{r.Baseline}, r.Candidates...)
	for i, c := range rows {
		name := c.EnvString()
		if i == 0 {
			name = "baseline (" + name + ")"
		}
		if c.Error != "" {
			p.f("%-32s %s\n", name, p.paint(ansiRed, "failed: "+c.Error))
			continue
		}
		predGC, predRSS := "-", "-"
		if c.Predicted != nil {
			predGC = fmt.Sprintf("%.2f", c.Predicted.GCPerSecond)
			predRSS = bytesOrInf(c.Predicted.RSSPeakBytes)
		}
		budget := "inside"
		if !c.InsideBudget {
			budget = "OVER"
		}
		row := fmt.Sprintf("%-32s %10s %10s %8s %8s %11s %11s %8s", name, predGC, fmt.Sprintf("%.2f", c.GCPerSecond),
			Percent(c.GCCPUFraction), Percent(c.GCAssistFraction), predRSS, Bytes(c.RSSPeakBytes), budget)
		switch {
		case r.Chosen != nil && c.Name == r.Chosen.Name:
			p.f("%s\n", p.paint(ansiBold, row+"  <- chosen"))
		case !c.InsideBudget:
			p.f("%s\n", p.paint(ansiYellow, row))
		default:
			p.f("%s\n", row)
		}
		if e := c.PredictionError; e != nil {
			var parts []string
			if e.GCPerSecond != nil {
				parts = append(parts, fmt.Sprintf("GC/s %+.0f%%", *e.GCPerSecond*100))
			}
			if e.RSSPeakBytes != nil {
				parts = append(parts, fmt.Sprintf("peak RSS %+.0f%%", *e.RSSPeakBytes*100))
			}
			p.f("%-32s prediction error: %s\n", "", strings.Join(parts, ", "))
		}
	}
	p.f("\n%s\n", indentWrapFirst(r.Why, "", "", 92))
	if r.Chosen != nil {
		p.f("  run with: %s\n", p.paint(ansiCyan, r.Chosen.EnvString()))
	}
	if b := r.BudgetLimit; b != nil {
		best := fmt.Sprintf("The most the budget allows, by the model: GOGC=off GOMEMLIMIT=%dMiB (the whole budget less the memory outside Go, no margin left) would run the GC %.2f times a second",
			r.BudgetLimitBytes>>20, b.GCPerSecond)
		if c := r.Chosen; c != nil && c.GCPerSecondChange != nil && r.Baseline.GCPerSecond > 0 {
			best += fmt.Sprintf(" (%+.0f%% from the baseline's %.2f); the chosen setting measured %.2f (%+.0f%%)",
				(b.GCPerSecond/r.Baseline.GCPerSecond-1)*100, r.Baseline.GCPerSecond, c.GCPerSecond, *c.GCPerSecondChange*100)
		}
		p.f("\n%s\n", indentWrapFirst(best+".", "", "", 92))
	}
	if len(r.Caveats) > 0 {
		p.f("\nWhat an experiment on this machine cannot promise about production\n")
		for _, c := range r.Caveats {
			p.f("%s\n", indentWrapFirst(c, "  - ", "    ", 92))
		}
	}
	return bw.Flush()
}

func bytesOrInf(v float64) string {
	if v > 1<<62 {
		return "unbounded"
	}
	return Bytes(uint64(v))
}
