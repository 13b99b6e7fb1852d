package sim_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/sim"
	"github.com/memdoctor/memdoctor/session"
)

// TestSimWatch watches simulated sessions as watch --until-confirmed --interval 5s watches a
// service: each session (profiles every 5 s) is diagnosed on its first 5 s, 10 s, ... as the
// watch diagnoses what it recorded so far, and every look counts. It prints, by shape and
// vantage point, the sessions with a false warning at some look, the look the verdict came at
// and the look the watch stops at, and the false-alarm rate over the healthy shapes. It fails
// when a steady leak (a library's 30-60 MiB/min, or 15-25 goroutines/s) is not confirmed at
// some look of the window.
//
//	MEMDOCTOR_SIM_N=10 go test ./internal/dev/sim -run TestSimWatch -v
//	MEMDOCTOR_SIM_SHAPES=healthy,warmup MEMDOCTOR_SIM_WATCH_WINDOW=3m ...
func TestSimWatch(t *testing.T) {
	steadyLeak := map[sim.Shape]string{sim.SteadyHeapLeak: sim.KindHeapLeak, sim.SteadyGoroutineLeak: sim.KindGoroutineLeak}
	if testing.Short() {
		t.Skip("watches every simulated session at every look: seconds per session")
	}
	n := simN(t)
	window := 90 * time.Second
	if v := os.Getenv("MEMDOCTOR_SIM_WATCH_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 30*time.Second {
			t.Fatalf("MEMDOCTOR_SIM_WATCH_WINDOW=%q: want a duration of 30s or more", v)
		}
		window = d
	}
	const step = 5 * time.Second
	root := t.TempDir()
	start := time.Now()
	var ws []sim.Watched
	var stopFound [][]sim.Finding // what each session's watch stopped on
	for _, shape := range sim.WatchShapes {
		if only := os.Getenv("MEMDOCTOR_SIM_SHAPES"); only != "" && !slices.Contains(strings.Split(only, ","), string(shape)) {
			continue
		}
		for _, vantage := range sim.WatchVantages {
			spec := sim.Spec{Shape: shape, Vantage: vantage, Window: window, Interval: step}
			for seed := uint64(1); seed <= uint64(n); seed++ {
				dir := filepath.Join(root, strconv.Itoa(len(ws)))
				truth, err := sim.Generate(dir, seed, spec)
				if err != nil {
					t.Fatalf("seed %d %+v: %v", seed, spec, err)
				}
				s, err := session.Open(dir)
				if err != nil {
					t.Fatalf("seed %d %+v: the generated session does not open: %v", seed, spec, err)
				}
				var looks []sim.Look
				for at := step; at <= window; at += step {
					d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(at)}, diagnose.Options{})
					if err != nil {
						t.Fatalf("seed %d %+v, first %s: %v", seed, spec, at, err)
					}
					looks = append(looks, sim.Look{At: at, Found: findings(d), Settled: d.Settled(ev.Target.Started).Done})
				}
				w := sim.WatchLooks(spec, truth, looks)
				ws = append(ws, w)
				var at []sim.Finding
				for _, l := range looks {
					if l.At == w.Stop {
						at = l.Found
					}
				}
				stopFound = append(stopFound, at)
				if leak := steadyLeak[shape]; leak != "" && !slices.ContainsFunc(looks, func(l sim.Look) bool {
					return slices.ContainsFunc(l.Found, func(f sim.Finding) bool { return f.Kind == leak && f.Warning })
				}) {
					t.Errorf("seed %d %s from %s: the steady leak is not confirmed at any look of %s", seed, shape, vantage, window)
				}
				os.RemoveAll(dir)
			}
		}
	}
	table := sim.WatchMarkdown(ws)
	t.Logf("%d simulated sessions watched every %s for %s (%d per cell) in %v\n\n%s", len(ws), step, window, n, time.Since(start).Round(time.Millisecond), table)
	for i, w := range ws {
		if w.Stop > 0 && !w.StopRight && len(w.Truth.Kinds) > 0 {
			t.Logf("stopped on a wrong verdict: seed %d %s/%s at %s: %v (truth: %v, culprits %v)", w.Truth.Params.Seed, w.Spec.Shape, w.Spec.Vantage, w.Stop, stopFound[i], w.Truth.Kinds, w.Truth.Culprits)
		}
		if w.FalseAlarm > 0 {
			t.Logf("false alarm: seed %d %s/%s at %s: %v", w.Truth.Params.Seed, w.Spec.Shape, w.Spec.Vantage, w.FalseAlarm, w.FalseKinds)
		}
	}
	if path := os.Getenv("MEMDOCTOR_SIM_WATCH_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}
