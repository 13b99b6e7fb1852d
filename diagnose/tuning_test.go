package diagnose

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// End to end: a recorded session (testdata/sessions), its diagnosis against the exported
// GC model.

// TestGCModelAgreesWithTheAdvice: the exported model is the one the gc-overhead rule advises
// from. On the recorded gateway-gc session, its prediction for the settings the program ran
// with is the rule's predicted rate before, and its advice for the session's budget is the
// rule's advice_env with the rule's predicted rate after.
func TestGCModelAgreesWithTheAdvice(t *testing.T) {
	s, err := session.Open("testdata/sessions/gateway-gc")
	if err != nil {
		t.Fatal(err)
	}
	d, ev, err := DiagnoseSession(s, evidence.Options{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := findingOfKind(d.Findings, KindGCOverhead)
	if f == nil {
		t.Fatal("no gc-overhead finding in gateway-gc")
	}
	m, ok := ModelGC(ev)
	if !ok {
		t.Fatal("no model")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	now := m.Predict(m.GOGC, m.GOMemLimit)
	if !near(now.GCPerSecond, f.Evidence["predicted_gc_per_second_before"]) || !near(now.HeapGoalBytes, f.Evidence["predicted_heap_peak_bytes_before"]) {
		t.Errorf("model now: %+v; the finding predicted %v GC/s and a %v-byte goal", now, f.Evidence["predicted_gc_per_second_before"], f.Evidence["predicted_heap_peak_bytes_before"])
	}
	gogc, limit, fits := m.Advice(ev.Budget, rule.Default.GC.BudgetUse)
	if !fits || strconv.Itoa(int(gogc)) != f.AdviceEnv["GOGC"] || fmt.Sprintf("%dMiB", int64(limit)>>20) != f.AdviceEnv["GOMEMLIMIT"] {
		t.Errorf("advice GOGC=%v GOMEMLIMIT=%v fits=%v; the finding advises %v", gogc, limit, fits, f.AdviceEnv)
	}
	after := m.Predict(gogc, limit)
	if !near(after.GCPerSecond, f.Evidence["predicted_gc_per_second_after"]) || !near(after.RSSPeakBytes, f.Evidence["predicted_rss_peak_bytes_after"]) {
		t.Errorf("model after: %+v; the finding predicted %v GC/s and %v bytes of RSS", after, f.Evidence["predicted_gc_per_second_after"], f.Evidence["predicted_rss_peak_bytes_after"])
	}
	// GOGC=off with no limit: no GC at all, and no bound on the heap.
	if off := m.Predict(-1, 0); off.GCPerSecond != 0 || !math.IsInf(off.HeapGoalBytes, 1) {
		t.Errorf("GOGC=off without a limit: %+v", off)
	}
	// GOGCFor is the inverse of the goal: the room it is asked for.
	g := m.GOGCFor(200 << 20)
	if p := m.Predict(g, 0); math.Abs(p.HeapGoalBytes-m.LiveBytes-200<<20) > 1<<20 {
		t.Errorf("GOGC %.0f leaves %.1f MiB above the live heap, want 200", g, (p.HeapGoalBytes-m.LiveBytes)/(1<<20))
	}
}
