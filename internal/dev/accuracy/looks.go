package accuracy

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/lab"
	"github.com/memdoctor/memdoctor/session"
)

// Looks is a session as `memdoctor watch --until-confirmed` sees it: diagnosed every step
// from its start, each time on what had been recorded so far, as the watch diagnoses its
// session every --interval.
type Looks struct {
	// Verdict is the first look that gives the expected verdict (TimeToVerdict): 0 when the
	// scenario expects nothing or no look within the verdict's limit gives it.
	Verdict time.Duration
	// Stop is the first look at which the watch stops (diagnose.Diagnosis.Settled: a problem
	// confirmed, or nothing found and nothing pending over diagnose.CleanWindow); 0 when no
	// look stops it. StopRight says whether the verdict it stops on is right: every expected
	// kind at warning with its culprit, no forbidden warning.
	Stop      time.Duration
	StopRight bool
	// FalseAlarm is the first look with a warning the scenario forbids (a kind it lists as
	// absent, or any warning in a control); 0 when no look has one. FalseKind is its kind.
	FalseAlarm time.Duration
	FalseKind  string
	// Last is the last look: the session's length, in steps.
	Last time.Duration
}

// Watch looks at a session every step up to until (or its end), as a watch that diagnoses
// what it recorded so far every step would, and says when the verdict came, when the
// watch would have stopped, and the first false alarm. The verdict is looked for up to
// verdictMax only, as TimeToVerdict does.
func Watch(dir string, sc lab.Scenario, step, until, verdictMax time.Duration) (Looks, error) {
	var l Looks
	s, err := session.Open(dir)
	if err != nil {
		return l, err
	}
	length := s.Manifest.End.Sub(s.Manifest.Start)
	if length <= 0 {
		return l, fmt.Errorf("%s: the session has no end time", dir)
	}
	for w := step; w <= until && w <= length+step/2; w += step {
		d, ev, err := diagnose.DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(w), Source: true}, diagnose.Options{})
		if err != nil {
			return l, fmt.Errorf("diagnose the first %s of %s: %w", w, dir, err)
		}
		l.Last = w
		if l.Verdict == 0 && w <= verdictMax && givesVerdict(d, sc, w) {
			l.Verdict = w
		}
		if l.FalseAlarm == 0 {
			if k := falseAlarm(d, sc.Expect); k != "" {
				l.FalseAlarm, l.FalseKind = w, k
			}
		}
		if l.Stop == 0 && d.Settled(ev.Target.Started).Done {
			v := Verdict{Ranks: map[string]int{}}
			check(&v, d, sc.Expect, w)
			l.Stop, l.StopRight = w, v.OK()
		}
	}
	return l, nil
}

// givesVerdict reports whether a diagnosis finds every kind a scenario expects, confirmed,
// with its culprit.
func givesVerdict(d *diagnose.Diagnosis, sc lab.Scenario, w time.Duration) bool {
	if len(sc.Expect.Kinds) == 0 {
		return false
	}
	v := Verdict{Ranks: map[string]int{}}
	ex := sc.Expect
	ex.Absent, ex.Confirm = nil, 0 // the verdict: the expected kinds, confirmed, with their culprits
	check(&v, d, ex, w)
	return len(v.FN) == 0 && len(v.NotJudged) == 0 && !culpritProblem(v)
}

// falseAlarm is the kind of the first warning a scenario forbids, "" when there is none.
func falseAlarm(d *diagnose.Diagnosis, ex lab.Expect) string {
	for _, f := range d.Findings {
		k := string(f.Kind)
		if f.Severity.Rank() < diagnose.Warning.Rank() || slices.Contains(ex.Kinds, k) || slices.Contains(ex.Allowed, k) {
			continue
		}
		if len(ex.Kinds) == 0 || slices.Contains(ex.Absent, k) {
			return k
		}
	}
	return ""
}

// looksMarkdown writes, for each scenario and vantage point, the look at which a watch
// --until-confirmed stops and whether it stops right, the first false alarm of any look, and
// the count of sessions with one.
func (m *Matrix) looksMarkdown(w io.Writer) {
	if len(m.Looks) == 0 {
		return
	}
	fmt.Fprintf(w, "\n#### Watched until confirmed (diagnosed every %s, as watch --until-confirmed does)\n\n", m.LookStep)
	fmt.Fprintf(w, "Each cell: where the watch stops and whether its verdict is right there (✓/✗; – it does not stop within the recording), then `!` and the first look with a false warning, if any.\n\n")
	fmt.Fprintf(w, "| scenario | expected | %s |\n|---|---|%s\n", joinVantages(" | "), strings.Repeat("---|", len(Vantages)))
	sessions, alarms := 0, 0
	var stops []time.Duration
	for _, sc := range m.Scenarios {
		expected := strings.Join(sc.Expect.Kinds, ", ")
		if expected == "" {
			expected = "no warning"
		}
		row := []string{sc.Name, expected}
		for _, v := range Vantages {
			l, ok := m.Looks[sc.Name][v]
			if !ok {
				row = append(row, "–")
				continue
			}
			sessions++
			cell := "–"
			if l.Stop > 0 {
				mark := "✗"
				if l.StopRight {
					mark = "✓"
				}
				cell = fmt.Sprintf("%s %s", mark, l.Stop)
				if l.StopRight && len(sc.Expect.Kinds) > 0 {
					stops = append(stops, l.Stop)
				}
			}
			if l.FalseAlarm > 0 {
				alarms++
				cell += fmt.Sprintf(" ! %s at %s", l.FalseKind, l.FalseAlarm)
			}
			row = append(row, cell)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(w, "\n%d session(s); %d with a false warning at some look; %d stopped right on the expected problem", sessions, alarms, len(stops))
	if len(stops) > 0 {
		slices.Sort(stops)
		fmt.Fprintf(w, " (median stop %s)", stops[len(stops)/2])
	}
	fmt.Fprintln(w, ".")
}
