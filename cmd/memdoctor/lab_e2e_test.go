package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/lab"
)

// TestGCAdviceDelivers runs the gateway-gc scenario, whose GC runs many times a second, and
// runs it again with the advice_env of its gc-overhead finding applied: GC/s must drop by at
// least 80% and peak RSS stay within the budget. (The verdicts of every scenario from every
// vantage point are TestAccuracyMatrix's.)
func TestGCAdviceDelivers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway-gc scenario twice")
	}
	defer parallel(t)()
	sc, ok := lab.Lookup("gateway-gc")
	if !ok {
		t.Fatal("no gateway-gc scenario")
	}
	d := runScenario(t, sc, filepath.Join(t.TempDir(), "before"), nil)
	if f := findingOf(d, diagnose.KindGCOverhead); f == nil || f.Severity.Rank() < diagnose.Warning.Rank() {
		t.Fatalf("no gc-overhead warning to act on: %s", kindsOf(d))
	}
	checkAdviceDelivers(t, sc, d)
}

func runScenario(t *testing.T, sc lab.Scenario, dir string, extraEnv []string) *diagnose.Diagnosis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sc.Expect.Watch+2*time.Minute)
	defer cancel()
	jsonPath := filepath.Join(t.TempDir(), "d.json")
	args := []string{"run", "--duration", sc.Expect.Watch.String(), "--interval", sc.Expect.Interval.String(),
		"--out", dir, "--json", jsonPath}
	if sc.Expect.Budget != "" {
		args = append(args, "--memory-budget", sc.Expect.Budget)
	}
	args = append(args, "--", memdoctorBin, "lab", "run", sc.Name)
	cmd := exec.CommandContext(ctx, memdoctorBin, args...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), append(sc.Expect.Env, extraEnv...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("memdoctor run: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	return loadDiagnosis(t, jsonPath)
}

func findingOf(d *diagnose.Diagnosis, k diagnose.Kind) *diagnose.Finding {
	var best *diagnose.Finding
	for i := range d.Findings {
		if f := &d.Findings[i]; f.Kind == k && (best == nil || f.Severity.Rank() > best.Severity.Rank()) {
			best = f
		}
	}
	return best
}

func kindsOf(d *diagnose.Diagnosis) string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, string(f.Kind)+"/"+string(f.Severity))
	}
	return strings.Join(out, ", ")
}

// checkAdviceDelivers re-runs a gc-overhead scenario with the advice_env applied: GC/s must
// drop by at least 80% and peak RSS stay within the budget.
func checkAdviceDelivers(t *testing.T, sc lab.Scenario, before *diagnose.Diagnosis) {
	f := findingOf(before, diagnose.KindGCOverhead)
	if len(f.AdviceEnv) == 0 {
		t.Fatalf("gc-overhead finding without advice_env: %+v", f)
	}
	var env []string
	for k, v := range f.AdviceEnv {
		env = append(env, k+"="+v)
	}
	after := runScenario(t, sc, filepath.Join(t.TempDir(), "after"), env)
	drop := 1 - after.Summary.GCPerSecond/before.Summary.GCPerSecond
	predicted := f.Evidence["predicted_gc_per_second_after"]
	t.Logf("advice %v: GC/s %.2f -> %.2f (predicted %.2f), drop %.0f%%; peak RSS %d MiB (budget %d MiB)",
		env, before.Summary.GCPerSecond, after.Summary.GCPerSecond, predicted, drop*100,
		after.Summary.RSSPeakBytes>>20, after.Summary.MemoryBudgetBytes>>20)
	if drop < 0.80 {
		t.Errorf("applying %v dropped GC/s by %.0f%%, want at least 80%%", env, drop*100)
	}
	if b := after.Summary.MemoryBudgetBytes; b == 0 || after.Summary.RSSPeakBytes > b {
		t.Errorf("peak RSS %d bytes with the advice, budget %d", after.Summary.RSSPeakBytes, b)
	}
	if math.Abs(after.Summary.GCPerSecond-predicted) > 0.5*predicted+0.5 {
		t.Logf("note: measured %.2f GC/s after, the model predicted %.2f", after.Summary.GCPerSecond, predicted)
	}
}
