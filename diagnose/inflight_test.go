package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/internal/dev/profgen"
	"github.com/memdoctor/memdoctor/source/pprofdir"
)

// TestHourOfGrowthIsNotInFlight: bench/analyze's folder, an hour of heap profiles made from
// node_exporter's real profile (here at 30 s, 120 of them, to keep the test short; the
// benchmark's are 360 at 10 s), in which the handler's site keeps 1.5 MiB a minute of what it
// allocates (17 -> 89 MiB, Kendall's tau 1.00 over its lows). Its site
// allocates hundreds of thousands of times what it holds, as a handler that keeps a little of
// every request does; the in-flight doubt made it "suspected, watch 54 min more". Memory that
// rose through every GC for an hour is kept: a confirmed leak, naming the handler.
func TestHourOfGrowthIsNotInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("120 profiles")
	}
	tp, err := pprofio.Default.ReadFile(filepath.Join(sharedProfiles, "node_exporter_heap_4types.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	err = profgen.Heap(tp, profgen.Series{Start: start, Step: 30 * time.Second, N: 120, LeakPerStep: 768 << 10}, func(i int, p *profile.Profile) error {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%04d.pb.gz", i)))
		if err != nil {
			return err
		}
		defer f.Close()
		return p.Write(f)
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := pprofdir.Load([]string{dir}, pprofdir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := Diagnose(ev, Options{})
	for _, f := range d.Findings {
		if f.Kind != KindHeapLeak {
			continue
		}
		if f.Confidence != Confirmed || f.Severity.Rank() < Warning.Rank() || len(f.Culprits) == 0 || f.Culprits[0].Function != "main.(*handler).ServeHTTP" {
			t.Errorf("%s %s: %s (culprits %+v)", f.Severity, f.Confidence, f.Title, f.Culprits)
		}
		return
	}
	t.Errorf("no heap-leak finding: %+v", d.NotJudged)
}
