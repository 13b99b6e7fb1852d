package words

import (
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// Every kind of verdict a rule returns is said: a title, a detail, evidence; and every
// reason a rule gives for not judging is a sentence, not the fallback.
func TestEveryCaseSaid(t *testing.T) {
	culprits := []rule.Culprit{{Function: "main.handle", Share: 0.9, Bytes: 9 << 20}}
	var top facts.GoroutineGroup
	top.Count = 150
	rise := rule.Rise{First: 1 << 20, Last: 9 << 20, Grew: 8 << 20, PerMinute: 4 << 20, N: 8, Confidence: rule.Confirmed}
	for _, c := range []any{
		&rule.HeapLeakCase{Rise: rise},
		&rule.SiteLeakCase{Site: culprits[0], Rise: rise},
		&rule.GoroutineLeakCase{Rise: &rise, Proof: &rule.Proof{Leaked: 12}},
		&rule.PileUpCase{Top: top, Total: 200, Share: 0.75, State: "chan send", Snap: "g.pb.gz"},
		&rule.RetentionCase{At: &facts.Split{RSSBytes: 400 << 20}, Hits: 3, Splits: 3},
		&rule.SpikeCase{Spikes: []facts.Spike{{PeakLive: 90 << 20, Baseline: 10 << 20}}, Peak: facts.Spike{PeakLive: 90 << 20, Baseline: 10 << 20}, Complete: 1, Window: 60},
		&rule.GCCase{Summary: facts.Summary{GCPerSecond: 8}, Live: 10 << 20, Alloc: 80 << 20, Tight: true},
		&rule.HotspotCase{Rate: 10 << 20, Seconds: 60, Patterns: map[string][]facts.Pattern{}},
		&rule.SnapshotHotspotCase{Patterns: []facts.Pattern{{Name: facts.PatternRegexp}}, Total: 10 << 20},
		&rule.NonGoCase{Median: 64 << 20, Readings: 5},
		&rule.OOMCase{Budget: 1 << 30, Peak: 1000 << 20, Near: true},
		&rule.MemoryCase{Rise: rise},
		&rule.CostCase{Rise: rise},
	} {
		f := finding(rule.Verdict{Kind: rule.KindHeapLeak, Severity: rule.Warning, Confidence: rule.Confirmed, Culprits: culprits, Case: c}, &facts.Facts{})
		if f.Title == "" || f.Detail == "" || len(f.Evidence) == 0 {
			t.Errorf("%T: title %q, detail %q, evidence %v", c, f.Title, f.Detail, f.Evidence)
		}
	}
	fs := &facts.Facts{Gaps: map[string]string{}}
	for _, g := range []string{facts.GapRSS, facts.GapLive, facts.GapGoroutines, facts.GapGC, facts.GapGCCPU, facts.GapHeapSnaps, facts.GapAligned, facts.GapBudget, facts.GapNonGo} {
		fs.Gaps[g] = "why " + g
	}
	for _, k := range rule.Kinds {
		for w := rule.WhyNeverMeasured; w <= rule.WhyProfileError; w++ {
			r := reason(rule.Unjudged{Kind: k, Why: w}, fs)
			if strings.HasPrefix(r, "not judged (") {
				continue // a reason this rule never gives
			}
			if r == "" {
				t.Errorf("%s, reason %d: empty", k, w)
			}
		}
	}
}

// A suspected heap leak that a confirmed goroutine leak explains says so, and does not ask to
// watch longer: there is nothing left to confirm.
func TestSuspectedHeapHeldByGoroutines(t *testing.T) {
	rise := rule.Rise{First: 2 << 20, Last: 4 << 20, Grew: 2 << 20, N: 19, Confidence: rule.Suspected, WatchMore: 29e9}
	c := &rule.HeapLeakCase{Rise: rise, HeldBy: &rule.Held{Bytes: 2 << 20, Goroutines: 1300}}
	f := finding(rule.Verdict{Kind: rule.KindHeapLeak, Severity: rule.Info, Confidence: rule.Suspected, Case: c}, &facts.Facts{})
	if !strings.HasPrefix(f.Title, "the live heap may grow with the leaked goroutines") || strings.Contains(f.Detail, "watch about") {
		t.Errorf("title %q, detail %q", f.Title, f.Detail)
	}
}
