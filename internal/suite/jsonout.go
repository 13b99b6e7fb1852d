package suite

import (
	"encoding/json"
	"io"
)

// Schema is the --json file's schema (docs/formats.md).
const Schema = "memdoctor/test/v1"

type jsonResult struct {
	Schema   string        `json:"schema"`
	Elapsed  float64       `json:"elapsed_seconds"`
	Summary  jsonSummary   `json:"summary"`
	Notes    []string      `json:"notes,omitempty"`
	Packages []jsonPackage `json:"packages"`
}

type jsonSummary struct {
	Packages  int `json:"packages"`
	Failed    int `json:"packages_not_checked"`
	Tests     int `json:"tests"`
	Leaks     int `json:"leaks"`
	NoLeak    int `json:"no_leak"`
	Suspected int `json:"suspected"`
	NotJudged int `json:"not_judged"`
}

type jsonPackage struct {
	Package  string     `json:"package"`
	Dir      string     `json:"dir"`
	Status   string     `json:"status"`
	Error    string     `json:"error,omitempty"`
	Elapsed  float64    `json:"elapsed_seconds"`
	Restarts int        `json:"restarts,omitempty"`
	Tests    []jsonTest `json:"tests,omitempty"`
}

type jsonTest struct {
	Name      string          `json:"name"`
	File      string          `json:"file"`
	Line      int             `json:"line"`
	Verdict   string          `json:"verdict"`
	Reason    string          `json:"reason,omitempty"`
	GoVerdict string          `json:"go_verdict,omitempty"`
	Parallel  bool            `json:"parallel,omitempty"`
	Elapsed   float64         `json:"elapsed_seconds"`
	Message   string          `json:"message,omitempty"`
	Output    string          `json:"output,omitempty"`
	Report    json.RawMessage `json:"report,omitempty"`
}

// WriteJSON writes the result as JSON (Schema); files are named relative to base.
func WriteJSON(w io.Writer, r *Result, base string) error {
	c := r.Count()
	out := jsonResult{Schema: Schema, Elapsed: r.Elapsed.Seconds(), Notes: r.Notes, Packages: []jsonPackage{},
		Summary: jsonSummary{Packages: c.Packages, Failed: c.Failed, Tests: c.Tests, Leaks: c.Leaks, NoLeak: c.NoLeak, Suspected: c.Suspected, NotJudged: c.NotJudged}}
	for _, p := range r.Packages {
		jp := jsonPackage{Package: p.Package, Dir: relPath(base, p.Dir), Status: p.Status, Error: p.Error, Elapsed: p.Elapsed.Seconds(), Restarts: p.Restarts}
		for _, t := range p.Tests {
			jt := jsonTest{Name: t.Name, File: relPath(base, t.File), Line: t.Line, Verdict: t.Verdict, Reason: t.Reason, GoVerdict: t.GoVerdict,
				Parallel: t.Parallel, Elapsed: t.Elapsed.Seconds(), Message: t.Message, Report: t.Report}
			if t.Verdict == VerdictNotJudged {
				jt.Output = t.Output
			}
			jp.Tests = append(jp.Tests, jt)
		}
		out.Packages = append(out.Packages, jp)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
