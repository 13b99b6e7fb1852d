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

// simN is how many sessions TestSimAccuracy generates per shape, vantage point and window:
// MEMDOCTOR_SIM_N, default 2 (about 10 s).
func simN(t *testing.T) int {
	v := os.Getenv("MEMDOCTOR_SIM_N")
	if v == "" && testing.Short() {
		return 1 // the inner loop: every cell once
	}
	if v == "" {
		return 2
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("MEMDOCTOR_SIM_N=%q: want a positive number of sessions per cell", v)
	}
	return n
}

// TestSimAccuracy scores the diagnosis on simulated sessions of known truth: N sessions (seeds
// 1..N) for every shape x vantage point x window, each diagnosed with diagnose.Diagnose. It
// prints precision and recall per finding kind, whether the culprit was in the top 3, and the
// share of entirely right verdicts per shape and vantage point. It fails only when the
// generator fails: the thresholds on the rules come with the rules.
//
//	MEMDOCTOR_SIM_N=5 go test ./internal/dev/sim -run TestSimAccuracy -v
//	MEMDOCTOR_SIM_TABLE=/tmp/sim.md go test ./internal/dev/sim -run TestSimAccuracy
//	MEMDOCTOR_SIM_SHAPES=heap-leak,spikes go test ./internal/dev/sim -run TestSimAccuracy -v  # some shapes only
func TestSimAccuracy(t *testing.T) {
	n := simN(t)
	score := sim.NewScore()
	root := t.TempDir()
	start := time.Now()
	sessions := 0
	for _, shape := range sim.Shapes {
		if only := os.Getenv("MEMDOCTOR_SIM_SHAPES"); only != "" && !slices.Contains(strings.Split(only, ","), string(shape)) {
			continue
		}
		for _, vantage := range sim.Vantages {
			for _, window := range sim.WindowsOf(shape) {
				spec := sim.Spec{Shape: shape, Vantage: vantage, Window: window}
				for seed := uint64(1); seed <= uint64(n); seed++ {
					dir := filepath.Join(root, strconv.Itoa(sessions))
					sessions++
					truth, err := sim.Generate(dir, seed, spec)
					if err != nil {
						t.Fatalf("seed %d %+v: %v", seed, spec, err)
					}
					s, err := session.Open(dir)
					if err != nil {
						t.Fatalf("seed %d %+v: the generated session does not open: %v", seed, spec, err)
					}
					if len(s.Warnings) > 0 {
						t.Errorf("seed %d %+v: reading the generated session warned: %v", seed, spec, s.Warnings)
					}
					d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
					if err != nil {
						t.Fatalf("seed %d %+v: %v", seed, spec, err)
					}
					score.Add(spec, truth, findings(d), limits(d))
					os.RemoveAll(dir)
				}
			}
		}
	}
	table := score.Markdown()
	t.Logf("%d simulated sessions (%d per cell) diagnosed in %v\n\n%s", sessions, n, time.Since(start).Round(time.Millisecond), table)
	for _, w := range score.Wrong {
		t.Logf("wrong: %s", w)
	}
	if path := os.Getenv("MEMDOCTOR_SIM_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// limits are a diagnosis's detection limits by kind.
func limits(d *diagnose.Diagnosis) map[string]float64 {
	out := map[string]float64{}
	for _, l := range d.Limits {
		out[string(l.Kind)] = l.PerMinute
	}
	return out
}

// findings reduces a diagnosis to what scoring needs.
func findings(d *diagnose.Diagnosis) []sim.Finding {
	var out []sim.Finding
	for _, f := range d.Findings {
		sf := sim.Finding{Kind: string(f.Kind), Warning: f.Severity.Rank() >= diagnose.Warning.Rank(), Suspected: f.Confidence == diagnose.Suspected, Title: f.Title}
		for _, c := range f.Culprits {
			sf.Culprits = append(sf.Culprits, c.Function)
			sf.Lines = append(sf.Lines, c.Line)
		}
		out = append(out, sf)
	}
	return out
}
