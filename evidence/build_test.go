package evidence

import (
	"testing"
	"time"
)

// TestNewAndFinish: evidence built from outside a session gets its window from its readings
// and says what is missing.
func TestNewAndFinish(t *testing.T) {
	ev := New("prometheus", Target{Name: "api:8080"}, Options{})
	rss := NewGauge(SourcePrometheus, 0)
	gc := NewCounter(SourcePrometheus)
	for i := range 10 {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		rss.Add(at, float64(100+i)*mb)
		gc.Add(at, float64(i*3))
	}
	ev.RSS, ev.GCCycles = rss.Series(), gc.Series()
	ev.Finish(Options{MemoryBudgetBytes: 1 << 30})
	if !ev.Start.Equal(t0) || !ev.End.Equal(t0.Add(135*time.Second)) {
		t.Errorf("window %v..%v", ev.Start, ev.End)
	}
	if ev.Budget != 1<<30 || ev.BudgetSource != "option" {
		t.Errorf("budget %d %q", ev.Budget, ev.BudgetSource)
	}
	if ev.Gaps[GapGoroutines] == "" || ev.Gaps[GapRSS] != "" {
		t.Errorf("gaps %v", ev.Gaps)
	}
	if got := ev.GCCycles.Rate(); got != 0.2 {
		t.Errorf("GC rate %v, want 0.2/s", got)
	}
}
