package words

import (
	"fmt"
	"strings"

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

// oomKill says a kill, and what the last heap profile before it held.
func oomKill(f *Finding, c *rule.OOMKillCase) {
	k := c.Kill
	var what string
	if k.Counted > 0 {
		what = fmt.Sprintf("the kernel OOM-killed the process (its memory cgroup counted %d OOM kill(s) in the window)", k.Counted)
		f.Evidence["cgroup_oom_kills_in_window_count"] = float64(k.Counted)
	} else {
		what = fmt.Sprintf("the process ended with %s at %s of its limit: most likely OOM-killed", k.What, pct(k.Share))
	}
	if k.Limit > 0 {
		f.Evidence["last_reading_of_limit_fraction"] = k.Share
		f.Evidence["limit_bytes"] = k.Limit
	}
	f.Title = "memory ran out: " + what
	sentence := strings.ToUpper(what[:1]) + what[1:]
	f.Detail = sentence + "."
	if !k.At.IsZero() && k.Limit > 0 {
		f.Detail = fmt.Sprintf("%s. Its last reading, at %s, had %s at %s of the %s limit.", sentence, k.At.UTC().Format("15:04:05"), k.What, pct(k.Share), bytesStr(k.Limit))
	}
	if c.HasView {
		v := c.View
		top := v.Retainers[0]
		before := max(k.At.Sub(k.Last.Snap.T).Seconds(), 0)
		label := "The last heap profile"
		if k.Last.Snap.Label != "" {
			label = fmt.Sprintf("The last heap profile (%s)", k.Last.Snap.Label)
		}
		f.Detail += fmt.Sprintf(" %s, taken %.1f s before that reading, held %s in use; the most at %s (%s, %s).",
			label, before, bytesStr(float64(v.InuseBytes)), top.Function, bytesStr(float64(top.Bytes)), pct(top.Share))
		f.Title += fmt.Sprintf("; before it, %s held %s of the heap", top.Function, pct(top.Share))
		f.Evidence["last_heap_inuse_bytes"] = float64(v.InuseBytes)
		f.Evidence["last_heap_age_seconds"] = before
	} else {
		f.Detail += " No heap profile was taken before it: watch a pprof endpoint, or embed the memdoctor agent, which keeps one from just before memory runs out."
	}
	f.Advice = []string{
		"Find what holds the memory at the top of the heap profile before the kill; the heap-leak, transient-spike and non-go-memory findings say whether it grew steadily or at once.",
		"Set GOMEMLIMIT below the limit so the GC works harder before it (it cannot save a real leak), shed load near the limit, or give the process more memory.",
	}
}
