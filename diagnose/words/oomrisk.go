package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

func oomRisk(f *Finding, c *rule.OOMCase) {
	budget, peak := c.Budget, c.Peak
	f.Evidence = map[string]float64{
		"memory_budget_bytes": budget,
		"rss_peak_bytes":      peak,
		"peak_of_budget":      peak / budget,
	}
	var reasons []string
	peakWhat := "RSS peaked"
	if c.HighWater {
		peakWhat = "RSS's high-water mark reached"
	}
	if c.Near {
		reasons = append(reasons, fmt.Sprintf("%s %s, %s of the %s budget (%s)", peakWhat, bytesStr(peak), pct(peak/budget), bytesStr(budget), c.BudgetSource))
	}
	if c.Trend {
		f.Evidence["growth_bytes_per_minute"] = c.Slope * 60
		f.Evidence["time_to_budget_seconds"] = c.Seconds
		if c.Soon {
			reasons = append(reasons, fmt.Sprintf("RSS grows %s/min and reaches the budget in about %s", bytesStr(c.Slope*60), humanDuration(c.Seconds)))
		}
	}
	if c.OOMKills > 0 {
		f.Evidence["cgroup_oom_kills_count"] = float64(c.OOMKills)
		reasons = append(reasons, fmt.Sprintf("the kernel OOM-killed %d process(es) in this cgroup", c.OOMKills))
	}
	f.Title = "memory will run out: " + reasons[0]
	f.Detail = fmt.Sprintf("%s. When RSS (with the page cache the cgroup counts) reaches the limit, the kernel OOM killer ends the process without warning.", joinSentences(reasons))
	f.Advice = append(f.Advice, "Find what grows or peaks first: see the heap-leak, transient-spike, runtime-retention and non-go-memory findings.")
	if c.HasLimit {
		limit := 0.9*budget - c.Outside
		f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
		f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s so the GC works harder before the limit instead of letting garbage push RSS over it (it cannot save a real leak).", mib(limit)))
	}
	f.Advice = append(f.Advice, "Shed load near the limit (the memdoctor agent's guard gives the application pressure levels for that), or give the process more memory.")
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
