package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"

	"github.com/memdoctor/memdoctor/compare"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/sanitize"
)

// CompareInput is what the comparison page shows: the comparison, and each session's evidence
// and diagnosis (the charts draw what the verdicts saw).
type CompareInput struct {
	Result     *compare.Result
	Old, New   *evidence.Evidence
	OldD, NewD *diagnose.Diagnosis
}

// compareView is what the comparison page template renders.
type compareView struct {
	Title       string
	Sides       []struct{ Tag, Line string }
	How         string
	Rows        []compareRow
	RowNotes    []string
	Findings    []findingChangeView
	CulpritRows []culpritDeltaView
	CulpritsHow string
	Charts      []Chart
	Notes       []string
	Version     string
	Generated   string

	Style, UPlotStyle template.CSS
	UPlot, Common     template.JS
	App               template.JS
	Data              template.JS
}

type compareRow struct {
	Label, Old, New, Change, P, N, Class string
}

type findingChangeView struct {
	Tag, Kind, Severity, Title, Culprit string
}

type culpritDeltaView struct{ Delta, Function string }

// CompareHTML writes the comparison as one self-contained page: who was compared, the table
// of metrics with their p-values, the findings that changed, the heap diff by function, and
// both sessions' charts on one time axis, each from its own start (OLD in grey). It reuses the
// report's charts: each session's is built as its report builds it, then the two are laid
// over each other.
func CompareHTML(w io.Writer, in CompareInput, opts HTMLOptions) error {
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Buckets <= 0 {
		opts.Buckets = defaultBuckets
	}
	r := in.Result
	end := math.Max(in.Old.Seconds(), in.New.Seconds())
	data := &PageData{
		Version: 1, End: roundTo(end, 3), Elapsed: true,
		Zone:     Zone{Name: "time since each session's start", Offsets: []ZoneOffset{{Offset: 0, Abbrev: "UTC"}}},
		Findings: []FindingMark{}, Snapshots: []Snapshot{},
		Charts: compareCharts(in, opts.Buckets),
	}
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("html comparison: %w", err)
	}
	v := compareView{
		Title: "memdoctor compare: " + sanitize.Text(r.Old.Name) + " → " + sanitize.Text(r.New.Name),
		How:   compareHow(r), Charts: data.Charts, Notes: r.Notes, Version: opts.Version,
		Data: template.JS(js), Style: template.CSS(assetStyle), UPlotStyle: template.CSS(assetUPlotCSS),
		UPlot: template.JS(assetUPlotJS), Common: template.JS(assetCommonJS), App: template.JS(assetAppJS),
	}
	v.Sides = append(v.Sides, struct{ Tag, Line string }{"OLD", sideLine(r.Old)}, struct{ Tag, Line string }{"NEW", sideLine(r.New)})
	v.Rows, v.RowNotes = compareRows(r)
	v.Findings = findingViews(r.Findings)
	if c := r.Culprits; c != nil {
		v.CulpritsHow = fmt.Sprintf("%s of the last heap snapshot of each session: %s → %s. Functions of the program's own code, as memdoctor diff attributes them.",
			c.Type, Bytes(uint64(max(c.OldTotal, 0))), Bytes(uint64(max(c.NewTotal, 0))))
		for _, ds := range [][]culprit.Delta{c.Shrank, c.Grew} {
			for _, d := range ds {
				v.CulpritRows = append(v.CulpritRows, culpritDeltaView{SignedBytes(d.Delta), d.Site.Function})
			}
		}
	}
	if in.NewD != nil && !in.NewD.Generated.IsZero() {
		v.Generated = in.NewD.Generated.In(opts.Location).Format("2006-01-02 15:04:05")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := comparePageTemplate.Execute(bw, v); err != nil {
		return fmt.Errorf("html comparison: %w", err)
	}
	return bw.Flush()
}

func compareHow(r *compare.Result) string {
	s := fmt.Sprintf("%s, alpha %g. A change is shown when it is significant", compare.TestName, r.Alpha)
	if r.MinChange > 0 {
		s += fmt.Sprintf(" and at least %.0f%%", r.MinChange*100)
	}
	s += "; ~ means no significant change, ? too little data to tell."
	if r.SkipSeconds > 0 {
		s += fmt.Sprintf(" Each session's first %s is left out.", Duration(time.Duration(r.SkipSeconds*float64(time.Second))))
	}
	return s
}

func compareRows(r *compare.Result) ([]compareRow, []string) {
	var rows []compareRow
	var notes []string
	for _, m := range r.Metrics {
		row := compareRow{Label: compare.Label(m.Name), Old: value(m.Unit, m.Old), New: value(m.Unit, m.New),
			Change: "~", P: "–", N: fmt.Sprintf("%d+%d", m.IntervalsOld, m.IntervalsNew)}
		if m.PValue != nil {
			row.P = pValue(*m.PValue)
		} else {
			row.Change = "?"
		}
		if m.Significant {
			row.Change, row.Class = "changed", "better"
			if m.Change != nil {
				row.Change = fmt.Sprintf("%+.1f%%", *m.Change*100)
			}
			if m.Regression {
				row.Class = "worse"
				row.Change += " worse"
			} else {
				row.Change += " better"
			}
		}
		rows = append(rows, row)
		if m.Note != "" {
			notes = append(notes, row.Label+": "+m.Note)
		}
	}
	return rows, notes
}

func findingViews(f compare.Findings) []findingChangeView {
	var out []findingChangeView
	for _, g := range []struct {
		tag string
		cs  []compare.FindingChange
	}{{"resolved", f.Resolved}, {"new", f.New}, {"persisting", f.Persisting}} {
		for _, c := range g.cs {
			sev, title := findingChangeParts(c)
			out = append(out, findingChangeView{Tag: g.tag, Kind: string(c.Kind), Severity: sev, Title: title, Culprit: c.Culprit})
		}
	}
	return out
}
