package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
)

func init() { register(KindOOMRisk, oomRisk) }

// Thresholds of the oom-risk rule.
const (
	oomNear      = 0.90 // of the budget: "peak use is within 10% of it"
	oomCritical  = 0.95
	oomHorizon   = 24 * time.Hour // a trend reaching the budget within this is a risk
	oomWakeUp    = time.Hour      // ... within this, critical
	oomTrendP    = 0.001
	oomMinGrowth = 16 << 20
)

// oomRisk reports a process that will reach its memory budget or cgroup limit (by trend), or
// whose peak is already within 10% of it, or whose cgroup saw OOM kills.
func oomRisk(in *Input) []Finding {
	if in.Budget == 0 {
		return nil
	}
	rss := between(in.RSS(), in.Start, in.End)
	if len(rss) < 3 {
		return nil
	}
	budget := float64(in.Budget)
	peak, _ := maxPoint(rss)
	var ooms uint64
	for _, c := range in.Cgroup {
		ooms = max(ooms, c.OOMKills)
	}
	f := Finding{
		Kind: KindOOMRisk,
		Evidence: map[string]float64{
			"memory_budget_bytes": budget,
			"rss_peak_bytes":      peak.V,
			"peak_of_budget":      peak.V / budget,
		},
		Start: rss[0].T, End: rss[len(rss)-1].T,
	}
	var reasons []string
	switch {
	case peak.V >= oomCritical*budget:
		f.Severity = Critical
		reasons = append(reasons, fmt.Sprintf("RSS peaked at %s, %s of the %s budget (%s)", bytesStr(peak.V), pct(peak.V/budget), bytesStr(budget), in.BudgetSource))
	case peak.V >= oomNear*budget:
		f.Severity = Warning
		reasons = append(reasons, fmt.Sprintf("RSS peaked at %s, %s of the %s budget (%s)", bytesStr(peak.V), pct(peak.V/budget), bytesStr(budget), in.BudgetSource))
	}
	if tr := trend(rss); tr.Increasing(oomTrendP) && tr.Last-tr.First >= oomMinGrowth {
		if left := budget - tr.Last; left > 0 {
			secs := left / tr.Slope
			f.Evidence["growth_bytes_per_minute"] = tr.Slope * 60
			f.Evidence["time_to_budget_seconds"] = secs
			if d := time.Duration(secs * float64(time.Second)); d < oomHorizon {
				reasons = append(reasons, fmt.Sprintf("RSS grows %s/min and reaches the budget in about %s", bytesStr(tr.Slope*60), humanDuration(secs)))
				if d < oomWakeUp {
					f.Severity = Critical
				} else if f.Severity == "" {
					f.Severity = Warning
				}
			}
		}
	}
	if ooms > 0 {
		f.Severity = Critical
		f.Evidence["cgroup_oom_kills_count"] = float64(ooms)
		reasons = append(reasons, fmt.Sprintf("the kernel OOM-killed %d process(es) in this cgroup", ooms))
	}
	if f.Severity == "" {
		return nil
	}
	f.Title = "memory will run out: " + reasons[0]
	f.Detail = fmt.Sprintf("%s. When RSS (with the page cache the cgroup counts) reaches the limit, the kernel OOM killer ends the process without warning.", joinSentences(reasons))
	var b *breakdown.At
	if bs := in.Breakdowns(); len(bs) > 0 {
		b = bs[len(bs)-1]
	}
	f.Advice = append(f.Advice, "Find what grows or peaks first: see the heap-leak, transient-spike, runtime-retention and non-go-memory findings.")
	if b != nil && b.NonGoBytes+b.FileBytes < uint64(0.5*budget) {
		limit := 0.9*budget - float64(b.NonGoBytes+b.FileBytes)
		f.AdviceEnv = map[string]string{"GOMEMLIMIT": mib(limit)}
		f.Advice = append(f.Advice, fmt.Sprintf("Set GOMEMLIMIT=%s so the GC works harder before the limit instead of letting garbage push RSS over it (it cannot save a real leak).", mib(limit)))
	}
	f.Advice = append(f.Advice, "Shed load near the limit (the memdoctor agent's guard gives the application pressure levels for that), or give the process more memory.")
	return []Finding{f}
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
