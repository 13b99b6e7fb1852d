package accuracy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/lab"
	"github.com/memdoctor/memdoctor/session"
)

// Verdict is one session judged at one window against a scenario's expectation.
type Verdict struct {
	Scenario string
	Vantage  Vantage
	Window   time.Duration
	// Found are the findings, "kind/severity" ("/suspected" added for suspected ones).
	Found []string
	// Problems says what is wrong; none means the verdict is right.
	Problems []string
	// Ranks is the rank of each expected culprit among its kind's culprits (0 = absent).
	Ranks map[string]int
	// Scores are this verdict's true positives, false negatives and false positives by kind.
	TP, FN, FP []string
	// NotJudged are the expected kinds the diagnosis said it could not judge from this
	// vantage point (its data cannot show them), with the reason it gave: neither found nor
	// missed, and never called healthy.
	NotJudged map[string]string
	// Err is set when the session could not be read.
	Err error
}

// OK reports a right verdict.
func (v Verdict) OK() bool { return v.Err == nil && len(v.Problems) == 0 }

// Judge diagnoses the first window of a session (from its start) and checks the verdict.
func Judge(dir string, sc lab.Scenario, v Vantage, window time.Duration) Verdict {
	out := Verdict{Scenario: sc.Name, Vantage: v, Window: window, Ranks: map[string]int{}}
	d, err := diagnoseWindow(dir, window)
	if err != nil {
		out.Err = err
		out.Problems = []string{err.Error()}
		return out
	}
	for _, f := range d.Findings {
		s := string(f.Kind) + "/" + string(f.Severity)
		if f.Confidence == diagnose.Suspected {
			s += "/suspected"
		}
		out.Found = append(out.Found, s)
	}
	check(&out, d, sc.Expect, window)
	return out
}

// diagnoseWindow diagnoses a session as if collection had stopped window after its start
// (0 = all of it).
func diagnoseWindow(dir string, window time.Duration) (*diagnose.Diagnosis, error) {
	s, err := session.Open(dir)
	if err != nil {
		return nil, err
	}
	var until time.Time
	if window > 0 {
		until = s.Manifest.Start.Add(window)
	}
	d, _, err := diagnose.DiagnoseSession(s, evidence.Options{Until: until, Source: true}, diagnose.Options{})
	return d, err
}

// check fills the problems and the scores of a verdict.
func check(v *Verdict, d *diagnose.Diagnosis, ex lab.Expect, window time.Duration) {
	early := ex.Confirm > 0 && window < ex.Confirm  // before this, a suspicion is right
	hidden := ex.Visible > 0 && window < ex.Visible // before this, not seeing it is right
	for _, k := range ex.Kinds {
		f := strongest(d, diagnose.Kind(k))
		switch {
		case f == nil && hidden:
			if v.NotJudged == nil {
				v.NotJudged = map[string]string{}
			}
			v.NotJudged[k] = fmt.Sprintf("below what a %s window shows (the scenario's effect needs %s)", window, ex.Visible)
			continue
		case f != nil && f.Severity.Rank() >= diagnose.Warning.Rank():
			v.TP = append(v.TP, k)
		case f != nil && early:
			v.TP = append(v.TP, k)
		case notJudged(d, k) != "":
			if v.NotJudged == nil {
				v.NotJudged = map[string]string{}
			}
			v.NotJudged[k] = notJudged(d, k)
			continue
		case early:
			v.FN = append(v.FN, k)
			v.Problems = append(v.Problems, fmt.Sprintf("no %s, not even suspected (found: %s)", k, strings.Join(v.Found, ", ")))
			continue
		default:
			v.FN = append(v.FN, k)
			v.Problems = append(v.Problems, fmt.Sprintf("no %s at warning (found: %s)", k, strings.Join(v.Found, ", ")))
			continue
		}
		// Before Confirm a suspicion is right, and it names a culprit when the profiles already
		// show one: a slow leak's site may not be sampled yet.
		if fn := culpritOf(ex, k); fn != "" && !(early && f.Confidence == diagnose.Suspected && len(f.Culprits) == 0) {
			r := rank(f, fn)
			v.Ranks[k] = r
			if r == 0 || r > 3 {
				v.Problems = append(v.Problems, fmt.Sprintf("%s is not among the top 3 culprits of %s (rank %d): %v", fn, k, r, culprits(f)))
			} else if line := lineOf(ex, k); line > 0 && f.Culprits[r-1].Line != line {
				v.Problems = append(v.Problems, fmt.Sprintf("%s names %s at line %d, want line %d", k, fn, f.Culprits[r-1].Line, line))
			}
		}
	}
	for _, f := range d.Findings {
		k := string(f.Kind)
		if f.Severity.Rank() < diagnose.Warning.Rank() || slices.Contains(ex.Kinds, k) || slices.Contains(ex.Allowed, k) {
			continue
		}
		if !slices.Contains(v.FP, k) {
			v.FP = append(v.FP, k)
		}
		if slices.Contains(ex.Absent, k) || len(ex.Kinds) == 0 {
			v.Problems = append(v.Problems, fmt.Sprintf("false %s (%s): %s", k, f.Severity, f.Title))
		}
	}
}

// notJudged is the reason the diagnosis gave for not judging kind k, "" when it judged it.
func notJudged(d *diagnose.Diagnosis, k string) string {
	for _, nj := range d.NotJudged {
		if string(nj.Kind) == k {
			return nj.Reason
		}
	}
	return ""
}

// culpritOf is the culprit expected for kind k ("" = none).
func culpritOf(ex lab.Expect, k string) string {
	if len(ex.Kinds) > 0 && k == ex.Kinds[0] {
		return ex.Culprit
	}
	return ex.Culprits[k]
}

// lineOf is the culprit's line expected for kind k (0 = any).
func lineOf(ex lab.Expect, k string) int64 {
	if len(ex.Kinds) > 0 && k == ex.Kinds[0] {
		return ex.Line
	}
	return 0
}

// strongest is the most severe finding of a kind.
func strongest(d *diagnose.Diagnosis, k diagnose.Kind) *diagnose.Finding {
	var best *diagnose.Finding
	for i := range d.Findings {
		if f := &d.Findings[i]; f.Kind == k && (best == nil || f.Severity.Rank() > best.Severity.Rank()) {
			best = f
		}
	}
	return best
}

func rank(f *diagnose.Finding, fn string) int {
	for i, c := range f.Culprits {
		if c.Function == fn {
			return i + 1
		}
	}
	return 0
}

func culprits(f *diagnose.Finding) []string {
	var out []string
	for _, c := range f.Culprits {
		out = append(out, c.Function)
	}
	return out
}

func culpritProblem(v Verdict) bool {
	for _, p := range v.Problems {
		if strings.Contains(p, "top 3 culprits") || strings.Contains(p, ", want line ") {
			return true
		}
	}
	return false
}

// JudgeRecording judges what Record returned for sc (rec, err) at every window, and unless
// cfg.NoLooks looks at each session as a watch --until-confirmed would (Watch, every 5 s up to
// the longest window; the time to verdict up to the shortest window of 60 s or more: the
// issue's minute).
func JudgeRecording(cfg Config, sc lab.Scenario, rec *Recording, err error, windows []time.Duration) ([]Verdict, map[Vantage]Looks, map[Vantage]error) {
	errs := map[Vantage]error{}
	looks := map[Vantage]Looks{}
	if err != nil {
		for _, v := range Vantages {
			errs[v] = err
		}
		return nil, looks, errs
	}
	var out []Verdict
	for _, v := range Vantages {
		dir, ok := rec.Sessions[v]
		if !ok {
			errs[v] = rec.Errors[v]
			continue
		}
		for _, w := range windows {
			out = append(out, Judge(dir, sc, v, w))
		}
		if cfg.NoLooks {
			continue
		}
		if l, err := Watch(dir, sc, LookStep, windows[len(windows)-1], ttvLimit(windows)); err == nil {
			looks[v] = l
		}
	}
	return out, looks, errs
}

// LookStep is how often the matrix looks at a session as a watch would: the time to verdict's
// resolution.
const LookStep = 5 * time.Second

// ttvLimit is how far the time to verdict is looked for: the shortest window of 60 s or more
// (the minute), else the longest.
func ttvLimit(windows []time.Duration) time.Duration {
	for _, w := range windows {
		if w >= time.Minute {
			return w
		}
	}
	return windows[len(windows)-1]
}
