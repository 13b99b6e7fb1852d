package words

import (
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// A cost climb whose top site allocated almost nothing at the start (a sample of a heap
// profile, 1 B/s as the rule floors it) read "allocates 23304177.0 times what it did": a
// rise from next to nothing is said with its two rates. A climb from a real start keeps its
// ratio.
func TestCostClimbFromNothing(t *testing.T) {
	rise := rule.Rise{First: 8 << 20, Last: 40 << 20, N: 9, Tau: 1, P: 2.8e-6, Confidence: rule.Confirmed}
	for _, tc := range []struct {
		c         rule.CostCase
		want, not string
	}{
		{rule.CostCase{Rise: rise, SiteRatio: 23304177, Concentration: 5e6, SiteFrom: 0.9, SiteTo: 22 << 20},
			"went from allocating next to nothing to 22.0 MiB/s", "times what it did"},
		{rule.CostCase{Rise: rise, SiteRatio: 44.6, Concentration: 14.3, SiteFrom: 900 << 10, SiteTo: 39 << 20},
			"allocates 44.6 times what it did", "next to nothing"},
	} {
		v := rule.Verdict{Kind: rule.KindCostGrowth, Severity: rule.Warning, Confidence: rule.Confirmed,
			Culprits: []rule.Culprit{{Function: "main.(*Notifier).flush", Share: 0.94}}, Case: &tc.c}
		f := finding(v, &facts.Facts{})
		if !strings.Contains(f.Title, tc.want) || strings.Contains(f.Title+f.Detail, tc.not) {
			t.Errorf("ratio %.1f: title %q\ndetail %q", tc.c.SiteRatio, f.Title, f.Detail)
		}
		if !strings.Contains(f.Detail, "p<0.001") {
			t.Errorf("p-value not as people read it: %q", f.Detail)
		}
	}
}

// A spike made by the profilers reading the process says so in its title, with the shares of
// its height the observer's and the program's allocation explain.
func TestSpikeOfTheObserverSaid(t *testing.T) {
	sp := facts.Spike{PeakLive: 200 << 20, Baseline: 100 << 20, Readings: 1}
	c := &rule.SpikeCase{Spikes: []facts.Spike{sp}, Peak: sp, Complete: 1, Window: 60, Readings: 1,
		Pair: []facts.Snapshot{{Path: "a"}, {Path: "b"}}, Explained: 0.05, Observer: 1.2, Unexplained: true, ByObserver: true}
	v := rule.Verdict{Kind: rule.KindTransientSpike, Severity: rule.Info, Confidence: rule.Confirmed, Case: c}
	f := finding(v, &facts.Facts{})
	if !strings.HasSuffix(f.Title, "made by the profilers reading it") || !strings.Contains(f.Detail, "allocated 120% of their height") ||
		!strings.Contains(f.Detail, "beyond its usual rate (5%)") || strings.Contains(f.Detail, "no burst stands out") {
		t.Errorf("title %q\ndetail %q", f.Title, f.Detail)
	}
}
