package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Thresholds of the oom-risk rule.
const (
	oomNear      = 0.90 // of the budget: "peak use is within 10% of it"
	oomCritical  = 0.95
	oomHorizon   = 24 * time.Hour // a trend reaching the budget within this is a risk
	oomWakeUp    = time.Hour      // ... within this, critical
	oomMinGrowth = 16 << 20
)

// oomRisk reports a process that will reach its memory budget or cgroup limit (by trend), or
// whose peak (the kernel's high-water mark included) is already within 10% of it, or whose
// cgroup saw OOM kills.
func oomRisk(in *input) outcome {
	fs := in.f
	if fs.Budget == 0 {
		return cannot(KindOOMRisk, 0, "%s: pass --memory-budget", fs.Gaps[facts.GapBudget])
	}
	if fs.RSS.Len() < 3 {
		return cannot(KindOOMRisk, 0, "resident memory was read %d time(s): %s", fs.RSS.Len(), orGap(fs.Gaps[facts.GapRSS], "too few"))
	}
	budget := float64(fs.Budget)
	peak := float64(fs.Summary.RSSPeakBytes)
	f := Finding{
		Kind:       KindOOMRisk,
		Confidence: Confirmed,
		Evidence: map[string]float64{
			"memory_budget_bytes": budget,
			"rss_peak_bytes":      peak,
			"peak_of_budget":      peak / budget,
		},
		Start: fs.RSS.First().T, End: fs.RSS.Last().T,
	}
	var reasons []string
	peakWhat := "RSS peaked"
	if fs.Summary.RSSPeakSource == "high-water mark" {
		peakWhat = "RSS's high-water mark reached"
	}
	switch {
	case peak >= oomCritical*budget:
		f.Severity = Critical
		reasons = append(reasons, fmt.Sprintf("%s %s, %s of the %s budget (%s)", peakWhat, bytesStr(peak), pct(peak/budget), bytesStr(budget), fs.BudgetSource))
	case peak >= oomNear*budget:
		f.Severity = Warning
		reasons = append(reasons, fmt.Sprintf("%s %s, %s of the %s budget (%s)", peakWhat, bytesStr(peak), pct(peak/budget), bytesStr(budget), fs.BudgetSource))
	}
	if g := judgeGrowth(fs.RSSSettledFloor, limits{minAbs: oomMinGrowth, minRel: 0.05, minSpan: 20 * time.Second}, 0); g.conf != "" {
		if left := budget - g.last; left > 0 {
			secs := left / g.slope
			f.Evidence["growth_bytes_per_minute"] = g.slope * 60
			f.Evidence["time_to_budget_seconds"] = secs
			if d := time.Duration(secs * float64(time.Second)); d < oomHorizon {
				reasons = append(reasons, fmt.Sprintf("RSS grows %s/min and reaches the budget in about %s", bytesStr(g.slope*60), humanDuration(secs)))
				switch {
				case g.conf == Suspected && f.Severity == "":
					f.Severity, f.Confidence, f.WatchMoreSeconds = Info, Suspected, g.watchMore.Seconds()
				case g.conf == Suspected:
				case d < oomWakeUp:
					f.Severity = Critical
				case f.Severity == "":
					f.Severity = Warning
				}
			}
		}
	}
	if fs.OOMKills > 0 {
		f.Severity, f.Confidence = Critical, Confirmed
		f.Evidence["cgroup_oom_kills_count"] = float64(fs.OOMKills)
		reasons = append(reasons, fmt.Sprintf("the kernel OOM-killed %d process(es) in this cgroup", fs.OOMKills))
	}
	if f.Severity == "" {
		return outcome{}
	}
	f.Title = "memory will run out: " + reasons[0]
	f.Detail = fmt.Sprintf("%s. When RSS (with the page cache the cgroup counts) reaches the limit, the kernel OOM killer ends the process without warning.", joinSentences(reasons))
	f.Advice = append(f.Advice, "Find what grows or peaks first: see the heap-leak, transient-spike, runtime-retention and non-go-memory findings.")
	if b := fs.LastSplit; b != nil && b.NonGoBytes+b.FileBytes < uint64(0.5*budget) {
		limit := 0.9*budget - float64(b.NonGoBytes+b.FileBytes)
		f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
		f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s so the GC works harder before the limit instead of letting garbage push RSS over it (it cannot save a real leak).", mib(limit)))
	}
	f.Advice = append(f.Advice, "Shed load near the limit (the memdoctor agent's guard gives the application pressure levels for that), or give the process more memory.")
	return found(f)
}

func joinSentences(parts []string) string {
	s := ""
	for i, p := range parts {
		switch {
		case i == 0:
			s = p
		case i == len(parts)-1:
			s += ", and " + p
		default:
			s += ", " + p
		}
	}
	return s
}
