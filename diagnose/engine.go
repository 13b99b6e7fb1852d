package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
	"github.com/memdoctor/memdoctor/session"
)

// Options tune a diagnosis.
type Options struct {
	// Now stamps the diagnosis; nil = time.Now.
	Now func() time.Time
}

// input is what every rule reads: the facts of the evidence, computed once.
type input struct {
	f      *facts.Facts
	notes  []string
	limits []DetectionLimit
	// growthPart is the part of memory the memory-growth rule found growing most.
	growthPart string
}

func (in *input) notef(format string, args ...any) {
	in.notes = append(in.notes, fmt.Sprintf(format, args...))
}

// outcome is what a rule concludes: its findings, or why it could not judge.
type outcome struct {
	findings  []Finding
	notJudged *NotJudged
}

// found returns an outcome with findings.
func found(fs ...Finding) outcome { return outcome{findings: fs} }

// cannot returns an outcome that could not judge kind, and why.
func cannot(kind Kind, watchMore time.Duration, format string, args ...any) outcome {
	return outcome{notJudged: &NotJudged{Kind: kind, Reason: fmt.Sprintf(format, args...), WatchMoreSeconds: watchMore.Seconds()}}
}

// rules is the rule set, one per finding kind, in the order of Kinds: the order Diagnose
// runs them in. Each lives in its own file.
var rules = []func(in *input) outcome{
	heapLeak, goroutineLeak, runtimeRetention, transientSpike, gcOverhead,
	allocationHotspot, nonGoMemory, oomRisk, memoryGrowth, costGrowth,
}

// Diagnose judges the evidence: every rule reads the same evidence, whatever observed the
// service, so every vantage point gets the same verdict from the same data.
func Diagnose(ev *evidence.Evidence, opts Options) *Diagnosis {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	in := &input{f: facts.Of(ev)}
	t := ev.Target
	d := &Diagnosis{
		Schema:    Schema,
		Generated: now().UTC(),
		Session:   ev.Session,
		Source:    ev.Mode,
		Target: Target{
			PID: t.PID, Name: t.Name, Command: t.Command, GoVersion: t.GoVersion, MainModule: t.MainModule,
			PprofURL: t.PprofURL, AgentURL: t.AgentURL, Local: t.Local, Status: t.Status,
		},
		Window:    Window{Start: ev.Start, End: ev.End, Seconds: ev.Seconds()},
		Summary:   in.f.Summary,
		Breakdown: Breakdown{Peak: ev.Peak, Latest: ev.Latest},
		Findings:  []Finding{},
	}
	for _, check := range rules {
		o := check(in)
		for i := range o.findings {
			o.findings[i].settle()
		}
		d.Findings = append(d.Findings, o.findings...)
		if o.notJudged != nil {
			d.NotJudged = append(d.NotJudged, *o.notJudged)
		}
	}
	d.Snapshots = in.snapshotViews()
	reconcile(in, d)
	slices.SortStableFunc(d.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(confRank(b.Confidence), confRank(a.Confidence)))
	})
	d.Notes = append(d.Notes, ev.Notes...)
	if c := in.f.Summary.CPUContention; c >= 0.1 {
		d.Notes = append(d.Notes, fmt.Sprintf("the machine was busy: the process's threads waited for a CPU %s of the time they could run; "+
			"the GC's CPU, which the Go runtime counts in wall-clock time, is corrected by that much", pct(c)))
	}
	if ev.PeakSkew > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("at the RSS peak the nearest Go reading is %s away: memory is not split there (too far apart to pair)", humanDuration(ev.PeakSkew.Seconds())))
	}
	if a := in.f.Assists; a != nil && findingOfKind(d.Findings, KindTransientSpike) == nil {
		d.Notes = append(d.Notes, fmt.Sprintf("%d execution trace(s) cover %s: goroutines spent %s in GC mark assists",
			a.Traces, humanDuration(a.Wall.Seconds()), humanDuration(a.Total.Seconds())))
	}
	d.Notes = append(d.Notes, in.notes...)
	d.Limits = in.limits
	d.Notes = append(d.Notes, ev.ProfileNotes()...)
	return d
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

// settle keeps a finding's severity and confidence in step: a suspected finding is never
// above info, and an unset confidence means confirmed.
func (f *Finding) settle() {
	if f.Confidence == "" {
		f.Confidence = Confirmed
	}
	if f.Confidence == Suspected && f.Severity.Rank() > Info.Rank() {
		f.Severity = Info
	}
	if f.Confidence == Confirmed {
		f.WatchMoreSeconds = 0
	}
}

func confRank(c Confidence) int {
	if c == Confirmed {
		return 1
	}
	return 0
}

func findingOfKind(fs []Finding, k Kind) *Finding {
	for i := range fs {
		if fs[i].Kind == k {
			return &fs[i]
		}
	}
	return nil
}

// Healthy reports whether a diagnosis found nothing and judged everything: the only case in
// which "no memory problem found" may be said.
func (d *Diagnosis) Healthy() bool { return len(d.Findings) == 0 && len(d.NotJudged) == 0 }
