package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/holders"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
)

var fmtBytes = report.Bytes

// diagnoseSession builds the evidence of a session and diagnoses it; whether its target still
// runs here decides whether advice may name a command for it.
func diagnoseSession(s *session.Session, budget uint64) (*diagnose.Diagnosis, *evidence.Evidence, error) {
	opts := evidence.Options{MemoryBudgetBytes: budget, TargetRuns: targetRuns(s.Manifest.Target), Source: true}
	return diagnose.DiagnoseSession(s, opts, diagnose.Options{})
}

// diagnoseDir loads a session, diagnoses it, saves diagnosis.json in it and reports it as
// the output flags say. It returns errFailOn when --fail-on matched.
func diagnoseDir(e *env, dir string, budget uint64, out outputFlags) (*diagnose.Diagnosis, error) {
	s, err := session.Open(dir)
	if err != nil {
		return nil, err
	}
	opts := evidence.Options{MemoryBudgetBytes: budget, Source: true}
	if out.until != nil {
		opts.Until = out.until()
	}
	d, ev, err := diagnose.DiagnoseSession(s, opts, diagnose.Options{})
	if err != nil {
		return nil, err
	}
	if err := session.WriteDiagnosis(dir, d); err != nil {
		e.log.Warn("could not save the diagnosis in the session", "err", err)
	}
	if err := emit(e, d, out); err != nil {
		return d, err
	}
	if out.holders { // watch --holders: the reading in full after the findings that carry it
		if held, ok, _ := holders.Load(dir); ok && held.Read.After(s.Manifest.Start) {
			text := e.stdout
			if out.json == "-" {
				text = e.stderr
			}
			fmt.Fprintln(text)
			if err := holders.WriteText(text, held); err != nil {
				return d, err
			}
		}
	}
	if out.html != "" {
		if err := writeHTMLReport(e, s, ev, d, out.html); err != nil {
			return d, err
		}
	}
	return d, failOn(d, out.failOn)
}

// emit prints the text report and writes the JSON where asked.
func emit(e *env, d *diagnose.Diagnosis, out outputFlags) error {
	text := e.stdout
	if out.json == "-" {
		text = e.stderr
	}
	if err := report.Text(text, d, report.TextOptions{Color: e.color && out.json != "-"}); err != nil {
		return err
	}
	if out.json == "" {
		return nil
	}
	if out.json == "-" {
		return writeJSON(e.stdout, d)
	}
	return writeJSONTo(e, out.json, d)
}

// createPrivate creates (or truncates) path for the user alone (0600, like the session's
// files): a report holds the command line, the environment variables it names, the
// program's function names. An existing file is made private too.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func writeJSON(w io.Writer, d *diagnose.Diagnosis) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func failOn(d *diagnose.Diagnosis, level string) error {
	if level == "" {
		return nil
	}
	sev, _ := diagnose.ParseSeverity(level)
	if d.MaxSeverity().Rank() >= sev.Rank() {
		return errFailOn
	}
	return nil
}
