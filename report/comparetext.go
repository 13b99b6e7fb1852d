package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/compare"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/sanitize"
)

// CompareText writes a comparison of two sessions: who they are, a benchstat-style table of
// the metrics (OLD, NEW, the change when it is significant, the p-value, the intervals
// compared), the findings resolved, new and persisting, the heap diff by function, and notes.
func CompareText(w io.Writer, r *compare.Result, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw, color: opts.Color}
	p.f("%s\n", p.paint(ansiBold, "memdoctor compare"))
	for _, s := range []struct {
		tag  string
		info compare.SideInfo
	}{{"OLD", r.Old}, {"NEW", r.New}} {
		p.f("  %s  %s\n", clean(s.tag), sideLine(s.info))
	}
	how := fmt.Sprintf("%s, alpha %g", compare.TestName, r.Alpha)
	if r.MinChange > 0 {
		how += fmt.Sprintf("; changes under %.0f%% are noise", r.MinChange*100)
	}
	if r.SkipSeconds > 0 {
		how += fmt.Sprintf("; each session's first %s left out", Duration(time.Duration(r.SkipSeconds*float64(time.Second))))
	}
	p.f("  %s\n\n", how)
	p.compareTable(r)
	p.compareFindings(r.Findings)
	if r.Culprits != nil {
		p.compareCulprits(r.Culprits)
	}
	if len(r.Notes) > 0 {
		p.f("\nNotes\n")
		for _, n := range r.Notes {
			p.f("%s\n", indentWrapFirst(n, "  - ", "    ", 92))
		}
	}
	return bw.Flush()
}

func sideLine(s compare.SideInfo) string {
	parts := []string{sanitize.Text(s.Name)}
	if s.Target != "" {
		parts = append(parts, sanitize.Text(s.Target))
	}
	when := Duration(time.Duration(s.Seconds * float64(time.Second)))
	if !s.Start.IsZero() {
		when += " from " + s.Start.UTC().Format("2006-01-02 15:04:05Z")
	}
	parts = append(parts, when)
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := s.Env[k]; ok {
			parts = append(parts, k+"="+sanitize.Text(v))
		}
	}
	return strings.Join(parts, " · ")
}

// compareTable prints one row per metric: "~" for a change that is not significant, "?" when
// there is too little data to tell; a significant change is marked better or worse.
func (p *printer) compareTable(r *compare.Result) {
	const row = "%-20s %13s %13s %17s %9s %9s"
	p.f(row+"\n", "", "OLD", "NEW", "change", "p", "intervals")
	var foot []string
	for _, m := range r.Metrics {
		change, pv := "~", "-"
		if m.PValue != nil {
			pv = pValue(*m.PValue)
		} else {
			change = "?"
		}
		if m.Significant {
			change = "changed"
			if m.Change != nil {
				change = fmt.Sprintf("%+.1f%%", *m.Change*100)
			}
			if m.Regression {
				change += " worse"
			} else {
				change += " better"
			}
		}
		n := fmt.Sprintf("%d+%d", m.IntervalsOld, m.IntervalsNew)
		line := fmt.Sprintf(row, compare.Label(m.Name), value(m.Unit, m.Old), value(m.Unit, m.New), change, pv, n)
		switch {
		case m.Regression:
			p.f("%s\n", p.paint(ansiRed, line))
		case m.Significant:
			p.f("%s\n", p.paint(ansiBold, line))
		default:
			p.f("%s\n", line)
		}
		if m.Note != "" {
			foot = append(foot, compare.Label(m.Name)+": "+m.Note)
		}
	}
	for _, f := range foot {
		p.f("%s\n", indentWrapFirst(f, "  ", "    ", 92))
	}
}

func value(unit string, v *float64) string {
	if v == nil {
		return "-"
	}
	return compare.FormatValue(unit, *v)
}

func (p *printer) compareFindings(f compare.Findings) {
	p.f("\nFindings\n")
	if len(f.Resolved)+len(f.New)+len(f.Persisting) == 0 {
		p.f("  none in either session\n")
		return
	}
	for _, g := range []struct {
		tag string
		cs  []compare.FindingChange
	}{{"resolved", f.Resolved}, {"new", f.New}, {"persisting", f.Persisting}} {
		for _, c := range g.cs {
			p.f("%s\n", indentWrapFirst(findingChangeLine(c), fmt.Sprintf("  %-11s ", g.tag), strings.Repeat(" ", 14), 92))
		}
	}
}

func findingChangeLine(c compare.FindingChange) string {
	sev, title := findingChangeParts(c)
	return fmt.Sprintf("%s (%s): %s", c.Kind, sev, title)
}

// findingChangeParts is a changed finding's severity (and how it moved, for one in both) and
// its title (NEW's when it has one).
func findingChangeParts(c compare.FindingChange) (sev, title string) {
	switch {
	case c.Old != nil && c.New != nil:
		sev = string(c.Old.Severity)
		if c.New.Severity != c.Old.Severity || c.New.Confidence != c.Old.Confidence {
			sev = fmt.Sprintf("%s %s -> %s %s", c.Old.Confidence, c.Old.Severity, c.New.Confidence, c.New.Severity)
		}
		return sev, c.New.Title
	case c.Old != nil:
		return string(c.Old.Severity), c.Old.Title
	case c.New != nil:
		return string(c.New.Severity), c.New.Title
	}
	return "", ""
}

func (p *printer) compareCulprits(c *compare.Culprits) {
	p.f("\nHeap in use at each session's end, by function (%s %s -> %s)\n", c.Type, Bytes(uint64(max(c.OldTotal, 0))), Bytes(uint64(max(c.NewTotal, 0))))
	if len(c.Grew)+len(c.Shrank) == 0 {
		p.f("  no function changed beyond the heap profiler's sampling noise\n")
	}
	for _, ds := range [][]culprit.Delta{c.Shrank, c.Grew} {
		for _, d := range ds {
			p.f("  %12s  %s\n", SignedBytes(d.Delta), d.Site.Function)
		}
	}
	for _, w := range c.Warnings {
		p.f("%s\n", indentWrapFirst(w, "  warning: ", "    ", 92))
	}
}

// pValue writes a p-value to three decimals, and a very small one as such.
func pValue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
