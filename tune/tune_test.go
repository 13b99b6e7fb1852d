package tune

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const gib = 1 << 30

// baseline is a session recorded from the lab's gateway-gc scenario (about 12 GC/s on a
// 26 MiB live heap, 23% of its CPU in the GC).
func baseline(t *testing.T) Run {
	t.Helper()
	dir := filepath.Join("testdata", "gateway-gc")
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return Run{Session: dir, Ev: ev, D: d}
}

func fixedNow() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }

func TestCandidatesFitTheBudget(t *testing.T) {
	m, ok := diagnose.ModelGC(baseline(t).Ev)
	if !ok {
		t.Fatal("no model of gateway-gc")
	}
	opts := Options{Budget: gib, Margin: DefaultMargin, Aim: DefaultAim}
	cs, why := Candidates(m, opts)
	if len(cs) != 3 || why != "" {
		t.Fatalf("candidates %+v (%s), want GOMEMLIMIT with GOGC=off, with the advised GOGC, and GOGC alone", cs, why)
	}
	now := m.Predict(m.GOGC, m.GOMemLimit)
	kinds := map[string]bool{}
	for _, c := range cs {
		p := c.Predicted
		if p.RSSPeakBytes > DefaultAim*gib+1 {
			t.Errorf("%s: predicted peak %.0f MiB, above %.0f%% of the budget", c.Name, p.RSSPeakBytes/(1<<20), DefaultAim*100)
		}
		if p.GCPerSecond >= now.GCPerSecond/5 {
			t.Errorf("%s: predicted %.2f GC/s, the baseline %.2f: not worth a run", c.Name, p.GCPerSecond, now.GCPerSecond)
		}
		_, limit := c.Env["GOMEMLIMIT"]
		kinds[map[bool]string{true: "limit", false: "gogc"}[limit]+"/"+map[bool]string{true: "off", false: "on"}[c.Env["GOGC"] == "off"]] = true
	}
	if !kinds["limit/off"] || !kinds["limit/on"] || !kinds["gogc/on"] {
		t.Errorf("kinds of candidates %v", kinds)
	}
	// A budget the live heap does not fit in: no candidate, and why.
	cs, why = Candidates(m, Options{Budget: 40 << 20, Margin: DefaultMargin, Aim: DefaultAim})
	if len(cs) != 0 || !strings.Contains(why, "no room") {
		t.Errorf("40 MiB budget: %d candidates, why %q", len(cs), why)
	}
}

// fakeRunner answers the baseline with the recorded session and each candidate with the
// figures given for it.
type fakeRunner struct {
	base  Run
	runs  map[string]diagnose.Summary
	fail  map[string]error
	asked []string
}

func (f *fakeRunner) Run(ctx context.Context, name string, env map[string]string) (Run, error) {
	f.asked = append(f.asked, name)
	if name == "baseline" {
		return f.base, f.fail[name]
	}
	if err := f.fail[name]; err != nil {
		return Run{}, err
	}
	s, ok := f.runs[name]
	if !ok {
		return Run{}, errors.New("unexpected run " + name)
	}
	ev := evidence.New("run", evidence.Target{}, evidence.Options{})
	return Run{Session: "sessions/" + name, Ev: ev, D: &diagnose.Diagnosis{Summary: s}}, nil
}

func TestExperimentChoosesInsideTheBudget(t *testing.T) {
	base := baseline(t)
	m, _ := diagnose.ModelGC(base.Ev)
	cs, _ := Candidates(m, Options{Budget: gib, Margin: DefaultMargin, Aim: DefaultAim})
	// The best GC figures, but over 90% of the budget; a good one inside; one that fails.
	f := &fakeRunner{base: base, runs: map[string]diagnose.Summary{
		cs[0].Name: {GCPerSecond: 0.1, GCCPUFraction: 0.004, RSSPeakBytes: 980 << 20},
		cs[1].Name: {GCPerSecond: 0.9, GCCPUFraction: 0.02, GCAssistFraction: 0.1, RSSPeakBytes: 400 << 20},
	}, fail: map[string]error{cs[2].Name: errors.New("the program exited")}}
	res, err := Experiment(context.Background(), f, Options{Budget: gib})
	if err != nil {
		t.Fatal(err)
	}
	// The one kept peaked at 400 MiB, above its prediction: its limit is not stretched.
	if len(f.asked) != 4 || f.asked[0] != "baseline" {
		t.Fatalf("runs %v, want the baseline then the three candidates", f.asked)
	}
	if res.Chosen == nil || res.Chosen.Name != cs[1].Name {
		t.Fatalf("chose %+v (%s), want %s: inside the budget", res.Chosen, res.Why, cs[1].Name)
	}
	c := res.Candidates[1]
	want := (0.9 - c.Predicted.GCPerSecond) / c.Predicted.GCPerSecond
	if c.PredictionError == nil || math.Abs(*c.PredictionError.GCPerSecond-want) > 1e-12 {
		t.Errorf("prediction error %+v, want %v", c.PredictionError, want)
	}
	if got := *c.GCPerSecondChange; math.Abs(got-(0.9-res.Baseline.GCPerSecond)/res.Baseline.GCPerSecond) > 1e-12 {
		t.Errorf("GC/s change %v", got)
	}
	if res.Candidates[0].InsideBudget || res.Candidates[2].Error == "" || !res.Candidates[1].InsideBudget {
		t.Errorf("budget and errors: %+v", res.Candidates)
	}
	for _, s := range []string{"980.0 MiB, above 921.6 MiB", "failed (the program exited)"} {
		if !strings.Contains(res.Why, s) {
			t.Errorf("why %q does not say %q", res.Why, s)
		}
	}
	checkGolden(t, "experiment.json", res)
}

// TestExperimentUsesTheBudget: a 512 MiB budget on gateway-gc's baseline. The candidates are
// sized for a predicted peak of 80% of the budget; the one kept peaked at 379 MiB, leaving a
// quarter of the budget idle (the shape seen: GOGC=700 + GOMEMLIMIT=402MiB, 379 MiB). Its
// limit is stretched to the margin's line (90%), run, and kept when it cuts more inside it;
// the result says what the whole budget would allow (GOGC=off, GOMEMLIMIT at the budget less
// the memory outside Go) beside it.
func TestExperimentUsesTheBudget(t *testing.T) {
	base := baseline(t)
	m, _ := diagnose.ModelGC(base.Ev)
	const budget = 512 << 20
	cs, _ := Candidates(m, Options{Budget: budget, Margin: DefaultMargin, Aim: DefaultAim})
	runs := map[string]diagnose.Summary{"gomemlimit-gogc-off-to-margin": {GCPerSecond: 1.9, GCCPUFraction: 0.03, RSSPeakBytes: 455 << 20}}
	for _, c := range cs {
		runs[c.Name] = diagnose.Summary{GCPerSecond: 2.5, GCCPUFraction: 0.04, RSSPeakBytes: 379 << 20}
	}
	f := &fakeRunner{base: base, runs: runs}
	res, err := Experiment(context.Background(), f, Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen == nil || res.Chosen.Name != "gomemlimit-gogc-off-to-margin" || !res.Chosen.InsideBudget {
		t.Fatalf("chose %+v (%s), want the limit stretched to the margin", res.Chosen, res.Why)
	}
	line := (1 - DefaultMargin) * budget
	if p := res.Chosen.Predicted.RSSPeakBytes; p > line || p < 0.85*budget {
		t.Errorf("the stretched limit predicts a peak of %.0f MiB; want near the margin's line, %.0f MiB", p/(1<<20), line/(1<<20))
	}
	if res.BudgetLimit == nil || res.BudgetLimitBytes >= budget || res.BudgetLimit.GCPerSecond > res.Chosen.Predicted.GCPerSecond {
		t.Errorf("budget's limit %+v at %d bytes; want the most the budget allows, beyond the chosen %+v", res.BudgetLimit, res.BudgetLimitBytes, res.Chosen.Predicted)
	}
}

func TestExperimentKeepsNothingWorse(t *testing.T) {
	base := baseline(t)
	m, _ := diagnose.ModelGC(base.Ev)
	cs, _ := Candidates(m, Options{Budget: gib, Margin: DefaultMargin, Aim: DefaultAim})
	f := &fakeRunner{base: base, runs: map[string]diagnose.Summary{}}
	for _, c := range cs { // each does more GC work than the baseline
		f.runs[c.Name] = diagnose.Summary{GCPerSecond: 20, GCCPUFraction: 0.5, RSSPeakBytes: 100 << 20}
	}
	res, err := Experiment(context.Background(), f, Options{Budget: gib})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen != nil || !strings.Contains(res.Why, "Keep the current settings") {
		t.Errorf("chose %+v: %s", res.Chosen, res.Why)
	}
}

func TestExperimentErrors(t *testing.T) {
	base := baseline(t)
	f := &fakeRunner{base: base, fail: map[string]error{"baseline": errors.New("boom")}}
	if _, err := Experiment(context.Background(), f, Options{Budget: gib}); err == nil || !strings.Contains(err.Error(), "baseline") {
		t.Errorf("a failed baseline: %v", err)
	}
	// A baseline without GC figures cannot be modelled.
	empty := evidence.New("run", evidence.Target{}, evidence.Options{})
	f = &fakeRunner{base: Run{Ev: empty, D: diagnose.Diagnose(empty, diagnose.Options{})}}
	if _, err := Experiment(context.Background(), f, Options{Budget: gib}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no GC figures: %v, want ErrNoModel", err)
	}
	if _, err := Experiment(context.Background(), f, Options{}); err == nil {
		t.Error("no budget: no error")
	}
	// A cancelled experiment stops between runs and says so.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f = &fakeRunner{base: base}
	if _, err := Experiment(ctx, f, Options{Budget: gib}); !errors.Is(err, context.Canceled) || len(f.asked) != 1 {
		t.Errorf("cancelled: %v after runs %v", err, f.asked)
	}
}

func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./tune -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("%s changed (go test ./tune -update if on purpose):\n%s", name, got)
	}
}

// TestChooseTies: GC work within 10% (or half a point of CPU) of the least is a tie, and a
// tie goes to the lower peak RSS; a clearly lower GC CPU wins even with more memory.
func TestChooseTies(t *testing.T) {
	base := Candidate{GCPerSecond: 12, GCCPUFraction: 0.25}
	opts := Options{Budget: gib, Margin: DefaultMargin}
	mk := func(name string, cpu float64, rssMiB uint64) Candidate {
		return Candidate{Name: name, Env: map[string]string{"GOGC": name}, GCPerSecond: 0.4, GCCPUFraction: cpu, RSSPeakBytes: rssMiB << 20, InsideBudget: true}
	}
	for _, tc := range []struct {
		name string
		cs   []Candidate
		want string
	}{
		{"tie: less memory", []Candidate{mk("a", 0.020, 790), mk("b", 0.021, 500)}, "b"},
		{"clear: less GC", []Candidate{mk("a", 0.020, 790), mk("b", 0.040, 300)}, "a"},
		{"half a point ties", []Candidate{mk("a", 0.010, 790), mk("b", 0.0145, 300)}, "b"},
	} {
		got, why := choose(base, tc.cs, opts)
		if got == nil || got.Name != tc.want {
			t.Errorf("%s: chose %+v (%s), want %s", tc.name, got, why, tc.want)
		}
	}
}
