package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/diagnose/words"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/units"
)

// Options tune a diagnosis.
type Options struct {
	// Now stamps the diagnosis; nil = time.Now.
	Now func() time.Time
}

// Diagnose judges the evidence: its facts are computed once, every rule judges them with the
// default thresholds, and the verdicts are put into words. Every vantage point gets the same
// verdict from the same data.
func Diagnose(ev *evidence.Evidence, opts Options) *Diagnosis {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	fs := facts.Of(ev)
	j := rule.Judge(fs, &rule.Default)
	said := words.Say(j, fs)
	d := &Diagnosis{
		Schema:    Schema,
		Generated: now().UTC(),
		Session:   ev.Session,
		Source:    ev.Mode,
		Target:    targetOf(ev),
		Window:    Window{Start: ev.Start, End: ev.End, Seconds: ev.Seconds()},
		Summary:   fs.Summary,
		Breakdown: Breakdown{Peak: ev.Peak, Latest: ev.Latest},
		Findings:  said.Findings,
		Snapshots: said.Views,
		NotJudged: said.NotJudged,
	}
	if d.Findings == nil {
		d.Findings = []Finding{}
	}
	d.Notes = append(d.Notes, ev.Notes...)
	if c := fs.Summary.CPUContention; c >= 0.1 {
		d.Notes = append(d.Notes, fmt.Sprintf("the machine was busy: the process's threads waited for a CPU %.0f%% of the time they could run; "+
			"the GC's CPU, which the Go runtime counts in wall-clock time, is corrected by that much", c*100))
	}
	if ev.PeakSkew > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("at the RSS peak the nearest Go reading is %s away: memory is not split there (too far apart to pair)", units.Duration(ev.PeakSkew)))
	}
	if a := fs.Assists; a != nil && rule.Of(j.Verdicts, KindTransientSpike) == nil {
		d.Notes = append(d.Notes, fmt.Sprintf("%d execution trace(s) cover %s: goroutines spent %s in GC mark assists",
			a.Traces, units.Duration(a.Wall), units.Duration(a.Total)))
	}
	d.Notes = append(d.Notes, said.Notes...)
	d.Limits = j.Limits
	d.Notes = append(d.Notes, ev.ProfileNotes()...)
	return d
}

// targetOf is the evidence's target and session in the v1 JSON form.
func targetOf(ev *evidence.Evidence) Target {
	t := ev.Target
	return Target{
		PID: t.PID, Name: t.Name, Command: ev.Command, GoVersion: t.GoVersion, MainModule: t.MainModule,
		PprofURL: t.PprofURL, AgentURL: t.AgentURL, Local: t.Local, Status: ev.Status,
	}
}

// DiagnoseSession builds the evidence of a session and diagnoses it; the evidence is
// returned too, for reports that draw what the verdict was made from.
func DiagnoseSession(s *session.Session, eopts evidence.Options, opts Options) (*Diagnosis, *evidence.Evidence, error) {
	ev, err := evidence.FromSession(s, eopts)
	if err != nil {
		return nil, nil, err
	}
	return Diagnose(ev, opts), ev, nil
}

// Healthy reports whether a diagnosis found nothing and judged everything: the only case in
// which "no memory problem found" may be said.
func (d *Diagnosis) Healthy() bool { return len(d.Findings) == 0 && len(d.NotJudged) == 0 }
