package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/lab"
	"github.com/memdoctor/memdoctor/session"
)

// verdictRow is one line of the accuracy table.
type verdictRow struct {
	scenario, expected, found string
	rank                      int // the expected culprit's rank among the kind's culprits (0 = absent, -1 = none expected)
	toVerdict                 time.Duration
	ok                        bool
}

var (
	tableMu sync.Mutex
	table   []verdictRow
)

// TestLabAccuracy runs every lab scenario under `memdoctor run` and checks the verdict: the
// expected kinds at warning or above, the expected culprit among the top 3, no forbidden
// kind. For gc-overhead it re-runs the program with the advice_env applied and checks the
// promised effect.
func TestLabAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every lab scenario for 20-60 s")
	}
	t.Cleanup(func() { logTable(t) })
	for _, sc := range lab.All() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			checkScenario(t, sc)
		})
	}
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

func checkScenario(t *testing.T, sc lab.Scenario) {
	dir := filepath.Join(t.TempDir(), "session")
	d := runScenario(t, sc, dir, nil)
	row := verdictRow{scenario: sc.Name, expected: strings.Join(sc.Expect.Kinds, ", "), rank: -1}
	if row.expected == "" {
		row.expected = "nothing (control)"
	}
	var found []string
	for _, f := range d.Findings {
		found = append(found, fmt.Sprintf("%s/%s", f.Kind, f.Severity))
	}
	row.found = strings.Join(found, ", ")
	if row.found == "" {
		row.found = "none"
	}
	problems := verdictProblems(d, sc.Expect)
	if sc.Expect.Culprit != "" {
		row.rank = culpritRank(d, diagnose.Kind(sc.Expect.Kinds[0]), sc.Expect.Culprit)
	}
	row.ok = len(problems) == 0
	for _, p := range problems {
		t.Error(p)
	}
	if row.ok && len(sc.Expect.Kinds) > 0 {
		row.toVerdict = timeToVerdict(t, dir, sc.Expect)
	}
	if slices.Contains(sc.Expect.Kinds, string(diagnose.KindGCOverhead)) && row.ok {
		checkAdviceDelivers(t, sc, d)
	}
	tableMu.Lock()
	table = append(table, row)
	tableMu.Unlock()
}

// verdictProblems lists what is wrong with a diagnosis for a scenario's expectations.
func verdictProblems(d *diagnose.Diagnosis, ex lab.Expect) []string {
	var out []string
	for _, k := range ex.Kinds {
		if f := findingOf(d, diagnose.Kind(k)); f == nil || f.Severity.Rank() < diagnose.Warning.Rank() {
			out = append(out, fmt.Sprintf("no %s finding at warning or above (findings: %s)", k, kindsOf(d)))
		}
	}
	if ex.Culprit != "" && len(ex.Kinds) > 0 {
		if r := culpritRank(d, diagnose.Kind(ex.Kinds[0]), ex.Culprit); r == 0 || r > 3 {
			out = append(out, fmt.Sprintf("%s is not among the top 3 culprits of %s (rank %d): %v", ex.Culprit, ex.Kinds[0], r, culpritsOf(d, diagnose.Kind(ex.Kinds[0]))))
		}
	}
	for k, fn := range ex.Culprits {
		if r := culpritRank(d, diagnose.Kind(k), fn); r == 0 || r > 3 {
			out = append(out, fmt.Sprintf("%s is not among the top 3 culprits of %s (rank %d): %v", fn, k, r, culpritsOf(d, diagnose.Kind(k))))
		}
	}
	for _, k := range ex.Absent {
		if f := findingOf(d, diagnose.Kind(k)); f != nil && f.Severity.Rank() >= diagnose.Warning.Rank() {
			out = append(out, fmt.Sprintf("false %s finding (%s): %s", k, f.Severity, f.Title))
		}
	}
	if len(ex.Kinds) == 0 {
		for _, f := range d.Findings {
			if f.Severity.Rank() >= diagnose.Warning.Rank() {
				out = append(out, fmt.Sprintf("the control got a %s %s finding: %s", f.Severity, f.Kind, f.Title))
			}
		}
	}
	return out
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

func culpritRank(d *diagnose.Diagnosis, k diagnose.Kind, fn string) int {
	if f := findingOf(d, k); f != nil {
		for i, c := range f.Culprits {
			if c.Function == fn {
				return i + 1
			}
		}
	}
	return 0
}

func culpritsOf(d *diagnose.Diagnosis, k diagnose.Kind) []string {
	var out []string
	if f := findingOf(d, k); f != nil {
		for _, c := range f.Culprits {
			out = append(out, c.Function)
		}
	}
	return out
}

func kindsOf(d *diagnose.Diagnosis) string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, string(f.Kind)+"/"+string(f.Severity))
	}
	return strings.Join(out, ", ")
}

// timeToVerdict re-diagnoses growing prefixes of the session and returns the shortest one
// that already reaches the verdict.
func timeToVerdict(t *testing.T, dir string, ex lab.Expect) time.Duration {
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	start, end := s.Window()
	for d := 5 * time.Second; start.Add(d).Before(end); d += 5 * time.Second {
		diag := diagnose.Diagnose(s, diagnose.Options{Until: start.Add(d)})
		if len(verdictProblems(diag, ex)) == 0 {
			return d
		}
	}
	return end.Sub(start).Round(time.Second)
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

func logTable(t *testing.T) {
	tableMu.Lock()
	defer tableMu.Unlock()
	slices.SortFunc(table, func(a, b verdictRow) int { return strings.Compare(a.scenario, b.scenario) })
	var b strings.Builder
	fmt.Fprintf(&b, "\n| scenario | expected | found | culprit rank | time to verdict | ok |\n|---|---|---|---|---|---|\n")
	for _, r := range table {
		rank := "n/a"
		if r.rank >= 0 {
			rank = fmt.Sprint(r.rank)
		}
		verdict := "n/a"
		if r.toVerdict > 0 {
			verdict = r.toVerdict.String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %v |\n", r.scenario, r.expected, r.found, rank, verdict, r.ok)
	}
	t.Log(b.String())
	if path := os.Getenv("MEMDOCTOR_ACCURACY_TABLE"); path != "" {
		os.WriteFile(path, []byte(b.String()), 0o644)
	}
}
