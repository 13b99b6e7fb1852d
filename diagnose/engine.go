package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// rules is the rule set, one per finding kind; each lives in its own file and registers
// itself. Diagnose runs them in the order of Kinds.
var rules = map[Kind]func(in *Input) []Finding{}

func register(k Kind, check func(in *Input) []Finding) { rules[k] = check }

// Diagnose diagnoses a loaded session.
func Diagnose(s *session.Session, opts Options) *Diagnosis {
	in := NewInput(s, opts)
	s = in.Session
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	m := s.Manifest
	d := &Diagnosis{
		Schema:    Schema,
		Generated: now().UTC(),
		Session:   s.Dir,
		Target: Target{
			PID:        m.Target.PID,
			Name:       m.Target.Name,
			Command:    m.Command,
			GoVersion:  m.Target.GoVersion,
			MainModule: m.Target.MainModule,
			PprofURL:   m.Target.PprofURL,
			AgentURL:   m.Target.AgentURL,
			Local:      m.Target.Local,
			Status:     m.Status,
		},
		Window:   Window{Start: in.Start, End: in.End, Seconds: in.Seconds()},
		Findings: []Finding{},
	}
	d.Summary = in.Summary()
	d.Breakdown = computeBreakdown(in)
	for _, k := range Kinds {
		if check, ok := rules[k]; ok {
			d.Findings = append(d.Findings, check(in)...)
		}
	}
	slices.SortStableFunc(d.Findings, func(a, b Finding) int {
		return cmp.Compare(b.Severity.Rank(), a.Severity.Rank())
	})
	if a := in.Assists(); a != nil && findingOfKind(d.Findings, KindTransientSpike) == nil {
		d.Notes = append(d.Notes, fmt.Sprintf("%d execution trace(s) cover %s: goroutines spent %s in GC mark assists",
			a.Traces, humanDuration(a.Wall.Seconds()), humanDuration(a.Total.Seconds())))
	}
	d.Notes = append(d.Notes, m.Notes...)
	d.Notes = append(d.Notes, s.Warnings...)
	d.Notes = append(d.Notes, in.notes...)
	return d
}

func findingOfKind(fs []Finding, k Kind) *Finding {
	for i := range fs {
		if fs[i].Kind == k {
			return &fs[i]
		}
	}
	return nil
}
