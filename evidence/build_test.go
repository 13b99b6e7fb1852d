package evidence

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/proftest"
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

// TestProfilesInHand: profiles added in hand are read as files would be (their totals give
// the live heap, their sites are compared) and never looked for on disk.
func TestProfilesInHand(t *testing.T) {
	ev := New("profiles", Target{}, Options{})
	for i := range 3 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		s := Snapshot{Kind: "heap", T: at, Path: filepath.Join(t.TempDir(), "absent.pb.gz")}
		ev.AddProfile(s, proftest.Heap(at, proftest.Held(map[string]int64{"example.com/svc.grow": int64(i+1) * mb})))
	}
	ev.Finish(Options{})
	if ev.Live.Src != SourceHeapProfile || ev.Live.Len() != 3 || ev.Live.Last().V != 3*mb {
		t.Errorf("live heap %+v, want three readings from the profiles' totals", ev.Live)
	}
	d, err := ev.HeapDiff(ev.Heaps[0], ev.Heaps[2], "inuse_space")
	if err != nil || len(d.ByFunction) != 1 || d.ByFunction[0].Delta != 2*mb {
		t.Errorf("diff %+v, %v: want the site's 2 MiB", d, err)
	}
	if n := ev.ProfileNotes(); len(n) != 0 {
		t.Errorf("notes %v: a profile in hand was looked for on disk", n)
	}
}
