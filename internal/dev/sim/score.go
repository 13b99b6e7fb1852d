package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Finding is one finding of a diagnosis, reduced to what scoring needs.
type Finding struct {
	Kind    string
	Warning bool // reported at warning or critical
	// Suspected: the diagnosis points to it without proof yet (never above info).
	Suspected bool
	Culprits  []string // functions, best first
	Lines     []int64  // the culprits' lines
	Title     string
}

// observer reports a name of memdoctor's own reads in the program: never a culprit.
func observer(s string) bool {
	return strings.Contains(s, "runtime/pprof.") || strings.Contains(s, "net/http/pprof.") || strings.Contains(s, "github.com/memdoctor/memdoctor/agent")
}

// KindScore counts, for one finding kind, how the diagnoses did against the truth.
type KindScore struct {
	TP, FP, FN, TN int
	// Suspected counts the false negatives the diagnosis found as suspected: pointed to, with
	// how long to watch to confirm, but not yet proved within the window.
	Suspected int
	// Unobservable counts sessions where the kind was present but the vantage point could
	// not show it; UnobservableFound those where it was reported anyway.
	Unobservable, UnobservableFound int
	// BelowLimit counts the false negatives whose growth was slower than the slowest the
	// diagnosis said it could see in the window (its detection_limits): not missed, stated.
	// They are left out of recall, like the unobservable.
	BelowLimit int
	// CulpritChecked counts true positives with a known culprit; CulpritTop3 those whose
	// culprit was among the finding's first three.
	CulpritChecked, CulpritTop3 int
	// LineChecked counts those of CulpritTop3 whose culprit's line is known; LineRight those
	// named at that line.
	LineChecked, LineRight int
}

// Precision is TP/(TP+FP); -1 when nothing was reported.
func (k KindScore) Precision() float64 { return ratio(k.TP, k.TP+k.FP) }

// Recall is TP/(TP+FN); -1 when nothing was there to find.
func (k KindScore) Recall() float64 { return ratio(k.TP, k.TP+k.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return -1
	}
	return float64(a) / float64(b)
}

// CellScore counts the sessions of one group (a shape and vantage point, say) whose verdict
// was entirely right: every required kind at warning with its culprit in the top 3, and no
// absent kind at warning.
type CellScore struct{ Sessions, Right int }

// Score accumulates the scores of many diagnosed sessions.
type Score struct {
	Kinds map[string]*KindScore
	// Cells are keyed by "shape/vantage/window".
	Cells map[string]*CellScore
	// Bands are keyed by "shape/band".
	Bands map[string]*CellScore
	// Wrong lists the first wrong verdicts, for reading.
	Wrong []string
}

// NewScore returns an empty score.
func NewScore() *Score {
	s := &Score{Kinds: map[string]*KindScore{}, Cells: map[string]*CellScore{}, Bands: map[string]*CellScore{}}
	for _, k := range Kinds {
		s.Kinds[k] = &KindScore{}
	}
	return s
}

const maxWrong = 40

// Add scores one diagnosis of a session generated for spec with truth tr, and reports
// whether its verdict was entirely right. limits are the diagnosis's detection limits: the
// slowest growth per minute it says each kind's rule could see in the window.
func (s *Score) Add(spec Spec, tr Truth, found []Finding, limits map[string]float64) bool {
	best := map[string]Finding{}
	for _, f := range found {
		if b, ok := best[f.Kind]; !ok || (f.Warning && !b.Warning) {
			best[f.Kind] = f
		}
	}
	warned := func(k string) (Finding, bool) {
		f, ok := best[k]
		return f, ok && f.Warning
	}
	var problems []string
	for _, k := range tr.Kinds {
		ks := s.kind(k)
		f, ok := warned(k)
		if slices.Contains(tr.Suspect, k) {
			f, ok = best[k]
		}
		if !ok && limits[k] > 0 && tr.growthPerMinute(k) > 0 && tr.growthPerMinute(k) < limits[k] {
			ks.BelowLimit++
			continue
		}
		if !ok {
			ks.FN++
			if b, found := best[k]; found && b.Suspected {
				ks.Suspected++
				problems = append(problems, "only suspected "+k)
			} else {
				problems = append(problems, "missed "+k)
			}
			continue
		}
		ks.TP++
		if want := tr.Culprits[k]; want != "" {
			ks.CulpritChecked++
			if i := slices.Index(f.Culprits, want); i >= 0 && i < 3 {
				ks.CulpritTop3++
				if line := tr.Lines[k]; line > 0 {
					ks.LineChecked++
					if i < len(f.Lines) && f.Lines[i] == line {
						ks.LineRight++
					} else {
						problems = append(problems, fmt.Sprintf("%s culprit %s not at line %d", k, want, line))
					}
				}
			} else {
				problems = append(problems, fmt.Sprintf("%s culprit %s not in top 3 %v", k, want, f.Culprits[:min(3, len(f.Culprits))]))
			}
		}
	}
	for _, k := range tr.Absent {
		ks := s.kind(k)
		if _, ok := warned(k); ok {
			ks.FP++
			problems = append(problems, "false "+k)
		} else {
			ks.TN++
		}
	}
	for _, f := range found {
		if observer(f.Title) || slices.ContainsFunc(f.Culprits, observer) {
			problems = append(problems, f.Kind+" names memdoctor's own reads")
		}
	}
	for _, k := range tr.Unobservable {
		ks := s.kind(k)
		ks.Unobservable++
		if _, ok := warned(k); ok {
			ks.UnobservableFound++
		}
	}
	right := len(problems) == 0
	count(s.Cells, fmt.Sprintf("%s/%s/%v", spec.Shape, spec.Vantage, spec.Window), right)
	if tr.Band != "" {
		count(s.Bands, string(spec.Shape)+"/"+tr.Band, right)
	}
	if !right && len(s.Wrong) < maxWrong {
		s.Wrong = append(s.Wrong, fmt.Sprintf("seed %d %s/%s/%v: %s", tr.Params.Seed, spec.Shape, spec.Vantage, spec.Window, strings.Join(problems, "; ")))
	}
	return right
}

func count(m map[string]*CellScore, key string, right bool) {
	c := m[key]
	if c == nil {
		c = &CellScore{}
		m[key] = c
	}
	c.Sessions++
	if right {
		c.Right++
	}
}

func (s *Score) kind(k string) *KindScore {
	ks := s.Kinds[k]
	if ks == nil {
		ks = &KindScore{}
		s.Kinds[k] = ks
	}
	return ks
}

// Markdown renders the scores as markdown tables: per kind, then the share of right
// verdicts per shape and vantage point (all windows together) and per window, then per
// difficulty band.
func (s *Score) Markdown() string {
	var b strings.Builder
	pct := func(r float64) string {
		if r < 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f%%", 100*r)
	}
	b.WriteString("| kind | TP | FP | FN (of which suspected) | TN | precision | recall | recall with suspected | culprit in top 3 | unobservable (found) | below the stated limit |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range Kinds {
		ks := s.kind(k)
		fmt.Fprintf(&b, "| %s | %d | %d | %d (%d) | %d | %s | %s | %s | %s | %d (%d) | %d |\n", k, ks.TP, ks.FP, ks.FN, ks.Suspected, ks.TN,
			pct(ks.Precision()), pct(ks.Recall()), pct(ratio(ks.TP+ks.Suspected, ks.TP+ks.FN)), culpritCell(ks), ks.Unobservable, ks.UnobservableFound, ks.BelowLimit)
	}
	b.WriteString("\nRight verdicts (every required kind with its culprit, no forbidden kind), by shape and vantage point:\n\n| shape |")
	for _, v := range Vantages {
		fmt.Fprintf(&b, " %s |", v)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(Vantages)) + "\n")
	for _, sh := range Shapes {
		fmt.Fprintf(&b, "| %s |", sh)
		for _, v := range Vantages {
			var c CellScore
			for key, cs := range s.Cells {
				if strings.HasPrefix(key, string(sh)+"/"+string(v)+"/") {
					c.Sessions += cs.Sessions
					c.Right += cs.Right
				}
			}
			fmt.Fprintf(&b, " %s |", cellText(c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nRight verdicts by window:\n\n| window | right |\n|---|---|\n")
	for _, w := range AllWindows {
		var c CellScore
		for key, cs := range s.Cells {
			if strings.HasSuffix(key, "/"+w.String()) {
				c.Sessions += cs.Sessions
				c.Right += cs.Right
			}
		}
		fmt.Fprintf(&b, "| %v | %s |\n", w, cellText(c))
	}
	if len(s.Bands) > 0 {
		b.WriteString("\nRight verdicts by rate band (heap-leak: slow < 3, fast >= 10 MiB/min; leak-under-spikes: < 10, >= 40 MiB/min; goroutine-leak: < 5, >= 20 per s):\n\n| shape | band | right |\n|---|---|---|\n")
		keys := make([]string, 0, len(s.Bands))
		for k := range s.Bands {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sh, bd, _ := strings.Cut(k, "/")
			fmt.Fprintf(&b, "| %s | %s | %s |\n", sh, bd, cellText(*s.Bands[k]))
		}
	}
	return b.String()
}

func culpritCell(ks *KindScore) string {
	if ks.CulpritChecked == 0 {
		return "n/a"
	}
	out := fmt.Sprintf("%d/%d", ks.CulpritTop3, ks.CulpritChecked)
	if ks.LineChecked > 0 {
		out += fmt.Sprintf(" (at its line %d/%d)", ks.LineRight, ks.LineChecked)
	}
	return out
}

func cellText(c CellScore) string {
	if c.Sessions == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Right, c.Sessions)
}
