package tune

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/memdoctor/memdoctor/units"
)

// tieShare and tieCPU: GC work within this share of the least (or, for GC CPU, within this
// many points of CPU) is a tie: run-to-run noise, not a difference worth memory.
const (
	tieShare = 0.10
	tieCPU   = 0.005
)

// choose keeps the candidate inside the budget that cuts the GC's work most: the least GC
// CPU (the share of the process's CPU the GC took), or, when the baseline's GC CPU is
// unknown, the fewest GC cycles per second. Candidates whose work ties with the least go by
// their peak RSS, the lower first: the same GC savings for less memory. A candidate must do
// less GC work than the baseline to be kept at all.
func choose(base Candidate, cs []Candidate, opts Options) (*Candidate, string) {
	byCPU := base.GCCPUFraction > 0
	work := func(c Candidate) float64 {
		if byCPU {
			return c.GCCPUFraction
		}
		return c.GCPerSecond
	}
	line := (1 - opts.Margin) * float64(opts.Budget)
	var ok []*Candidate
	var rejected []string
	least := math.Inf(1)
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Error != "":
			rejected = append(rejected, fmt.Sprintf("%s failed (%s)", envString(c.Env), c.Error))
		case !c.InsideBudget:
			rejected = append(rejected, fmt.Sprintf("%s peaked at %s, above %s", envString(c.Env), units.Bytes(float64(c.RSSPeakBytes)), units.Bytes(line)))
		case work(*c) >= work(base):
			rejected = append(rejected, fmt.Sprintf("%s did no less GC work than the baseline", envString(c.Env)))
		default:
			ok = append(ok, c)
			least = math.Min(least, work(*c))
		}
	}
	tie := least * (1 + tieShare)
	if byCPU {
		tie = math.Max(tie, least+tieCPU)
	}
	var best *Candidate
	for _, c := range ok {
		if work(*c) <= tie && (best == nil || c.RSSPeakBytes < best.RSSPeakBytes) {
			best = c
		}
	}
	if best == nil {
		why := fmt.Sprintf("No candidate cut the GC's work with a peak RSS within %.0f%% of the %s budget (%s)", (1-opts.Margin)*100, units.Bytes(float64(opts.Budget)), units.Bytes(line))
		if len(rejected) > 0 {
			why += ": " + strings.Join(rejected, "; ")
		}
		return nil, why + ". Keep the current settings, or cut the allocation rate."
	}
	c := *best
	return &c, explain(base, c, byCPU, rejected, opts)
}

// explain says why c was chosen, what the model predicted for it, and what was not kept.
func explain(base, c Candidate, byCPU bool, rejected []string, opts Options) string {
	line := (1 - opts.Margin) * float64(opts.Budget)
	var b strings.Builder
	if byCPU {
		fmt.Fprintf(&b, "%s cut the GC's CPU from %s to %s of the process's CPU", envString(c.Env), units.Percent(base.GCCPUFraction), units.Percent(c.GCCPUFraction))
	} else {
		fmt.Fprintf(&b, "%s cut the GC's work most", envString(c.Env))
	}
	fmt.Fprintf(&b, " and GC cycles from %.2f/s to %.2f/s", base.GCPerSecond, c.GCPerSecond)
	if c.GCPerSecondChange != nil {
		fmt.Fprintf(&b, " (%+.1f%%)", *c.GCPerSecondChange*100)
	}
	fmt.Fprintf(&b, "; its peak RSS, %s, stayed within %.0f%% of the %s budget (%s).", units.Bytes(float64(c.RSSPeakBytes)),
		(1-opts.Margin)*100, units.Bytes(float64(opts.Budget)), units.Bytes(line))
	if p := c.Predicted; p != nil {
		fmt.Fprintf(&b, " The model predicted %.2f GC/s and a peak RSS of %s", p.GCPerSecond, units.Bytes(p.RSSPeakBytes))
		if e := c.PredictionError; e != nil && e.GCPerSecond != nil {
			fmt.Fprintf(&b, " (measured GC/s %+.0f%% off the prediction)", *e.GCPerSecond*100)
		}
		b.WriteString(".")
	}
	if len(rejected) > 0 {
		fmt.Fprintf(&b, " Not kept: %s.", strings.Join(rejected, "; "))
	}
	return b.String()
}

// envString writes settings as a shell would take them: "GOGC=off GOMEMLIMIT=800MiB".
func envString(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+env[k])
	}
	if len(parts) == 0 {
		return "the defaults"
	}
	return strings.Join(parts, " ")
}

// EnvString writes a candidate's settings as a shell would take them.
func (c Candidate) EnvString() string { return envString(c.Env) }
