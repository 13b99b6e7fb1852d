package accuracy

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/lab"
)

// Matrix is every verdict of a run of the matrix, with the time to verdict of each scenario
// and vantage point.
type Matrix struct {
	Scenarios []lab.Scenario
	Windows   []time.Duration
	Verdicts  []Verdict
	// TimeToVerdict by scenario and vantage point (0 = never, or nothing expected).
	TimeToVerdict map[string]map[Vantage]time.Duration
	// Errors are recordings that failed, by scenario and vantage point.
	Errors map[string]map[Vantage]error
	// Looks are the sessions as a watch --until-confirmed sees them, looked at every
	// LookStep, by scenario and vantage point.
	Looks    map[string]map[Vantage]Looks
	LookStep time.Duration
}

// Add records a scenario's verdicts.
func (m *Matrix) Add(vs ...Verdict) { m.Verdicts = append(m.Verdicts, vs...) }

func (m *Matrix) verdict(sc string, v Vantage, w time.Duration) (Verdict, bool) {
	for _, x := range m.Verdicts {
		if x.Scenario == sc && x.Vantage == v && x.Window == w {
			return x, true
		}
	}
	return Verdict{}, false
}

// Markdown writes the matrix: for each window, a table of scenario by vantage point (right
// or wrong, and the time to verdict), then precision and recall by finding kind.
func (m *Matrix) Markdown(w io.Writer) {
	for _, win := range m.Windows {
		fmt.Fprintf(w, "\n#### Window %s\n\n| scenario | expected | %s |\n|---|---|%s\n", win, joinVantages(" | "), strings.Repeat("---|", len(Vantages)))
		for _, sc := range m.Scenarios {
			expected := strings.Join(sc.Expect.Kinds, ", ")
			if expected == "" {
				expected = "no warning"
			}
			row := []string{sc.Name, expected}
			for _, v := range Vantages {
				row = append(row, m.cell(sc, v, win))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	m.looksMarkdown(w)
	fmt.Fprintf(w, "\n#### Precision and recall by finding kind (all windows, all vantage points)\n\n| kind | true positives | false negatives | false positives | not judged | precision | recall |\n|---|---|---|---|---|---|---|\n")
	t := Tally(m.Verdicts, 0)
	for _, k := range kindsOf(t) {
		s := t[k]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %s |\n", k, s.TP, s.FN, s.FP, s.NotJudged, ratio(s.Precision()), ratio(s.Recall()))
	}
	if nj := m.notJudgedReasons(); len(nj) > 0 {
		fmt.Fprintf(w, "\nNot judged (the data of that vantage point cannot show it, as the diagnosis said):\n")
		for _, l := range nj {
			fmt.Fprintf(w, "- %s\n", l)
		}
	}
}

// cell is one scenario's verdict from one vantage point at one window.
func (m *Matrix) cell(sc lab.Scenario, v Vantage, win time.Duration) string {
	if err := m.Errors[sc.Name][v]; err != nil {
		return "not recorded"
	}
	x, ok := m.verdict(sc.Name, v, win)
	if !ok {
		return "–"
	}
	if !x.OK() {
		return "✗ " + shortProblem(x.Problems[0])
	}
	s := "✓"
	if len(x.NotJudged) > 0 {
		var kinds []string
		for k := range x.NotJudged {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		s = "– not judged: " + strings.Join(kinds, ", ")
		if strings.HasPrefix(x.NotJudged[kinds[0]], "below what") {
			s = "– too slow to show yet: " + strings.Join(kinds, ", ")
		}
		if len(x.TP) == 0 {
			return s
		}
		s = "✓ " + s
	}
	if ttv := m.TimeToVerdict[sc.Name][v]; ttv > 0 && len(sc.Expect.Kinds) > 0 {
		s += fmt.Sprintf(" (%s)", ttv)
	}
	if len(x.FP) > 0 {
		s += " +" + strings.Join(x.FP, ",")
	}
	return s
}

func shortProblem(p string) string {
	if i := strings.Index(p, " (found"); i > 0 {
		p = p[:i]
	}
	if len(p) > 60 {
		p = p[:57] + "..."
	}
	return strings.ReplaceAll(p, "|", "/")
}

func joinVantages(sep string) string {
	var s []string
	for _, v := range Vantages {
		s = append(s, string(v))
	}
	return strings.Join(s, sep)
}

func ratio(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// Failures lists the wrong verdicts, one line each.
func (m *Matrix) Failures() []string {
	var out []string
	for _, v := range m.Verdicts {
		if !v.OK() {
			out = append(out, fmt.Sprintf("%s from %s at %s: %s", v.Scenario, v.Vantage, v.Window, strings.Join(v.Problems, "; ")))
		}
	}
	slices.Sort(out)
	return out
}

// notJudgedReasons lists, once per vantage point and kind, why an expected kind was not
// judged.
func (m *Matrix) notJudgedReasons() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range m.Verdicts {
		for k, why := range v.NotJudged {
			key := string(v.Vantage) + " " + k
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, fmt.Sprintf("%s from %s: %s", k, v.Vantage, why))
		}
	}
	slices.Sort(out)
	return out
}
