package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/units"
)

// Schema identifies the tune JSON format.
const Schema = "memdoctor/tune/v1"

// Defaults of Options.
const (
	// DefaultMargin: a setting is inside the budget when its measured peak RSS is at most
	// (1 - margin) of it. The margin covers what a short run on this machine does not see:
	// a larger live heap later, other load, memory outside Go that grows.
	DefaultMargin = 0.10
	// DefaultAim: candidates are sized for a predicted peak RSS of this share of the budget,
	// below the margin's line, so that the model's error does not push a good setting out.
	DefaultAim = 0.80
)

// Options tune an experiment.
type Options struct {
	Budget uint64  // the memory the service may use, in bytes; required
	Margin float64 // 0 = DefaultMargin
	Aim    float64 // 0 = DefaultAim
}

// Runner runs the program once, with env set in its environment over the inherited one, for
// the experiment's duration under the experiment's load, and returns the session it recorded.
type Runner interface {
	Run(ctx context.Context, name string, env map[string]string) (Run, error)
}

// Run is one recorded run: its session directory, its evidence and its diagnosis.
type Run struct {
	Session string
	Ev      *evidence.Evidence
	D       *diagnose.Diagnosis
}

// Result is the experiment: the baseline, every candidate, and the choice.
type Result struct {
	Schema            string  `json:"schema"`
	MemoryBudgetBytes uint64  `json:"memory_budget_bytes"`
	SafetyMargin      float64 `json:"safety_margin"`
	// Model is the pacer model as calibrated on the baseline run (nil when it could not be).
	Model      *diagnose.GCModel `json:"model,omitempty"`
	Baseline   Candidate         `json:"baseline"`
	Candidates []Candidate       `json:"candidates"`
	// Chosen is the candidate kept; null when none cut the GC's work inside the budget.
	Chosen *Candidate `json:"chosen"`
	// BudgetLimit is the most any setting within the budget can cut, by the model: GOGC=off
	// with GOMEMLIMIT at the whole budget less the memory outside Go (BudgetLimitBytes), no
	// margin left; the measured cut is set against it (nil without a model).
	BudgetLimit      *diagnose.GCPrediction `json:"budget_limit,omitempty"`
	BudgetLimitBytes uint64                 `json:"budget_limit_bytes,omitempty"`
	// Why says why it was chosen, or why none was.
	Why string `json:"why"`
	// Caveats say what an experiment on this machine cannot promise about production.
	Caveats []string `json:"caveats"`
}

// Candidate is one setting and what its run measured.
type Candidate struct {
	Name    string            `json:"name"`
	Env     map[string]string `json:"env"`
	Session string            `json:"session,omitempty"`
	// Predicted is the model's prediction (for the baseline: the calibrated model at the
	// settings it ran with).
	Predicted *diagnose.GCPrediction `json:"predicted,omitempty"`
	// What the run measured, as its diagnosis's summary has it (GC CPU is the share of the
	// process's CPU time; the peak RSS is the kernel's high-water mark).
	GCPerSecond      float64 `json:"gc_per_second"`
	GCCPUFraction    float64 `json:"gc_cpu_fraction"`
	GCAssistFraction float64 `json:"gc_assist_fraction"`
	RSSPeakBytes     uint64  `json:"rss_peak_bytes"`
	// PredictionError is (measured - predicted) / predicted.
	PredictionError *Errors `json:"prediction_error,omitempty"`
	// InsideBudget: the measured peak RSS is at most (1 - margin) x the budget.
	InsideBudget bool `json:"inside_budget"`
	// GCPerSecondChange and GCCPUChange are relative to the baseline's.
	GCPerSecondChange *float64 `json:"gc_per_second_change,omitempty"`
	GCCPUChange       *float64 `json:"gc_cpu_change,omitempty"`
	// Error says why the run failed (it then measured nothing).
	Error string `json:"error,omitempty"`

	gogc, limit float64
}

// Errors are a prediction's relative errors.
type Errors struct {
	GCPerSecond  *float64 `json:"gc_per_second,omitempty"`
	RSSPeakBytes *float64 `json:"rss_peak_bytes,omitempty"`
}

// ErrNoModel reports a baseline whose GC could not be modelled.
var ErrNoModel = errors.New("the baseline run shows no GC to model: its live heap or allocation rate is unknown (did the program run, allocate and print gctrace?)")

// Experiment runs the baseline, the candidates the model proposes for the budget, and picks
// one. It returns the result so far with an error when a run could not be made at all (the
// baseline failing, or ctx ending); a candidate whose run fails is kept with its error.
func Experiment(ctx context.Context, r Runner, opts Options) (*Result, error) {
	if opts.Budget == 0 {
		return nil, errors.New("tune needs a memory budget")
	}
	if opts.Margin <= 0 || opts.Margin >= 1 {
		opts.Margin = DefaultMargin
	}
	if opts.Aim <= 0 || opts.Aim > 1-opts.Margin {
		opts.Aim = min(DefaultAim, 1-opts.Margin)
	}
	res := &Result{Schema: Schema, MemoryBudgetBytes: opts.Budget, SafetyMargin: opts.Margin, Candidates: []Candidate{}}
	base, err := r.Run(ctx, "baseline", nil)
	if err != nil {
		return res, fmt.Errorf("the baseline run: %w", err)
	}
	res.Baseline = Candidate{Name: "baseline", Env: envOf(base.Ev)}
	res.Baseline.measure(base, opts)
	res.Caveats = caveats(base, opts)
	model, ok := diagnose.ModelGC(base.Ev)
	if !ok {
		return res, ErrNoModel
	}
	res.Model = &model
	p := model.Predict(model.GOGC, model.GOMemLimit)
	res.Baseline.Predicted = &p
	res.Baseline.PredictionError = predictionError(p, &res.Baseline)
	cands, why := Candidates(model, opts)
	if len(cands) == 0 {
		res.Why = why
		return res, nil
	}
	for _, c := range cands {
		if err := res.run(ctx, r, c, opts); err != nil {
			return res, err
		}
	}
	res.Chosen, res.Why = choose(res.Baseline, res.Candidates, opts)
	if c, ok := stretched(res.Chosen, model, opts); ok {
		if err := res.run(ctx, r, c, opts); err != nil {
			return res, err
		}
		res.Chosen, res.Why = choose(res.Baseline, res.Candidates, opts)
	}
	if limit := float64(opts.Budget) - model.OutsideBytes; limit > model.LiveBytes+model.NonHeapBytes {
		p := model.Predict(-1, limit)
		res.BudgetLimit, res.BudgetLimitBytes = &p, uint64(limit)
	}
	return res, nil
}

// run runs one candidate and adds it, measured (or with its error), to the result; it
// returns an error only when ctx ended.
func (res *Result) run(ctx context.Context, r Runner, c Candidate, opts Options) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	run, err := r.Run(ctx, c.Name, c.Env)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.Error = err.Error()
		res.Candidates = append(res.Candidates, c)
		return nil
	}
	c.measure(run, opts)
	c.PredictionError = predictionError(*c.Predicted, &c)
	c.GCPerSecondChange = change(res.Baseline.GCPerSecond, c.GCPerSecond)
	c.GCCPUChange = change(res.Baseline.GCCPUFraction, c.GCCPUFraction)
	res.Candidates = append(res.Candidates, c)
	return nil
}

// stretchMin: a chosen limit is stretched when the measured headroom to the margin's line
// would raise it by at least this share: less is within a run's noise.
const stretchMin = 0.05

// stretched is GOGC=off with a GOMEMLIMIT sized for a peak RSS at the margin's line, when the
// chosen candidate has a limit and its run left budget idle: candidates are sized for a
// predicted peak of Aim of the budget, below the line, so that the model's error does not
// push a good setting out; the chosen run measured that error, and the limit is sized with
// it (an underpredicted peak shrinks it in proportion). ok is false when that would not
// raise the chosen limit by stretchMin.
func stretched(chosen *Candidate, m diagnose.GCModel, opts Options) (Candidate, bool) {
	if chosen == nil || chosen.limit <= 0 || chosen.RSSPeakBytes == 0 || chosen.Predicted == nil || chosen.Predicted.RSSPeakBytes <= 0 {
		return Candidate{}, false
	}
	line := (1 - opts.Margin) * float64(opts.Budget)
	under := math.Max(1, float64(chosen.RSSPeakBytes)/chosen.Predicted.RSSPeakBytes)
	limit := math.Floor((line/under-m.OutsideBytes)/(1<<20)) * (1 << 20)
	if limit < chosen.limit*(1+stretchMin) {
		return Candidate{}, false
	}
	p := m.Predict(-1, limit)
	env := map[string]string{"GOGC": "off", "GOMEMLIMIT": strconv.FormatInt(int64(limit)>>20, 10) + "MiB"}
	return Candidate{Name: "gomemlimit-gogc-off-to-margin", Env: env, Predicted: &p, gogc: -1, limit: limit}, true
}

// Candidates are the settings the model proposes for the budget, each with its prediction:
// GOMEMLIMIT with GOGC=off (the heap may use the budget; the limit is the only bound),
// GOMEMLIMIT with the GOGC the gc-overhead advice gives (the GC runs about once a second at
// most, the limit caps the heap), and GOGC alone sized so that the predicted peak fits.
// Candidates that the model says cut no GC work are left out. The limit is sized for a
// predicted peak RSS of Aim of the budget: GOMEMLIMIT bounds the runtime's memory, so memory
// outside Go (the binary, C libraries) comes off first. why says why there is none.
func Candidates(m diagnose.GCModel, opts Options) (out []Candidate, why string) {
	budget := float64(opts.Budget)
	aimRSS := opts.Aim * budget
	limit := math.Floor((aimRSS-m.OutsideBytes)/(1<<20)) * (1 << 20)
	if limit < 1.5*(m.LiveBytes+m.NonHeapBytes) {
		return nil, fmt.Sprintf("the budget leaves the heap no room: %.0f%% of %s, less memory outside Go (%s), is under 1.5 times the live heap and the runtime's other memory (%s); cut the live heap or raise the budget",
			opts.Aim*100, units.Bytes(budget), units.Bytes(m.OutsideBytes), units.Bytes(m.LiveBytes+m.NonHeapBytes))
	}
	now := m.Predict(m.GOGC, m.GOMemLimit)
	add := func(name string, gogc, limit float64) {
		p := m.Predict(gogc, limit)
		if p.GCPerSecond >= 0.95*now.GCPerSecond {
			return // no GC work cut, by the model's own account
		}
		env := map[string]string{"GOGC": gogcString(gogc)}
		if limit > 0 {
			env["GOMEMLIMIT"] = strconv.FormatInt(int64(limit)>>20, 10) + "MiB"
		}
		for _, c := range out {
			if c.Env["GOGC"] == env["GOGC"] && c.Env["GOMEMLIMIT"] == env["GOMEMLIMIT"] {
				return
			}
		}
		out = append(out, Candidate{Name: name, Env: env, Predicted: &p, gogc: gogc, limit: limit})
	}
	add("gomemlimit-gogc-off", -1, limit)
	if gogc, _, fits := m.Advice(opts.Budget, opts.Aim); fits && gogc > 0 {
		add("gomemlimit-gogc-"+gogcString(gogc), gogc, limit)
	}
	if room := aimRSS - m.OutsideBytes - m.NonHeapBytes - m.LiveBytes; room > 0 {
		gogc := math.Min(math.Floor(m.GOGCFor(room)/50)*50, maxGOGC)
		if m.GOGC < 0 || gogc > m.GOGC {
			add("gogc-"+gogcString(gogc), gogc, 0)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("the model predicts that no setting within %.0f%% of the %s budget cuts the GC's work: it already runs %.2f times per second with its heap near what the budget allows",
			opts.Aim*100, units.Bytes(budget), m.GCPerSecond)
	}
	return out, ""
}

// maxGOGC bounds GOGC alone: beyond it, the heap's growth with the live heap is all that
// matters, and a GOMEMLIMIT candidate says it better.
const maxGOGC = 10000

func gogcString(g float64) string {
	if g < 0 {
		return "off"
	}
	return strconv.Itoa(int(g))
}

// measure fills what a run measured, as its diagnosis summarised it.
func (c *Candidate) measure(r Run, opts Options) {
	s := r.D.Summary
	c.Session = r.Session
	c.GCPerSecond, c.GCCPUFraction, c.GCAssistFraction, c.RSSPeakBytes = s.GCPerSecond, s.GCCPUFraction, s.GCAssistFraction, s.RSSPeakBytes
	c.InsideBudget = s.RSSPeakBytes > 0 && float64(s.RSSPeakBytes) <= (1-opts.Margin)*float64(opts.Budget)
}

func predictionError(p diagnose.GCPrediction, c *Candidate) *Errors {
	e := &Errors{}
	if p.GCPerSecond > 0 {
		e.GCPerSecond = ptr((c.GCPerSecond - p.GCPerSecond) / p.GCPerSecond)
	}
	if p.RSSPeakBytes > 0 && !math.IsInf(p.RSSPeakBytes, 0) && c.RSSPeakBytes > 0 {
		e.RSSPeakBytes = ptr((float64(c.RSSPeakBytes) - p.RSSPeakBytes) / p.RSSPeakBytes)
	}
	if e.GCPerSecond == nil && e.RSSPeakBytes == nil {
		return nil
	}
	return e
}

func change(base, v float64) *float64 {
	if base <= 0 {
		return nil
	}
	return ptr((v - base) / base)
}

func ptr(v float64) *float64 { return &v }

// envOf is the GC settings a run had in its environment.
func envOf(ev *evidence.Evidence) map[string]string {
	env := map[string]string{}
	if v := ev.Target.GOGC; v != "" {
		env["GOGC"] = v
	}
	if v := ev.Target.GOMEMLIMIT; v != "" {
		env["GOMEMLIMIT"] = v
	}
	return env
}
