package diagnose

import (
	"cmp"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// A rule diagnoses one finding kind. It is a pure function of its input.
type rule struct {
	kind  Kind
	check func(in *Input) []Finding
}

// rules is the rule set, one per finding kind; each lives in its own file.
var rules []rule

// Diagnose diagnoses a loaded session.
func Diagnose(s *session.Session, opts Options) *Diagnosis {
	in := NewInput(s, opts)
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
	d.Summary = computeSummary(in)
	d.Breakdown = computeBreakdown(in)
	for _, r := range rules {
		d.Findings = append(d.Findings, r.check(in)...)
	}
	slices.SortStableFunc(d.Findings, func(a, b Finding) int {
		return cmp.Compare(b.Severity.Rank(), a.Severity.Rank())
	})
	d.Notes = append(d.Notes, m.Notes...)
	d.Notes = append(d.Notes, s.Warnings...)
	d.Notes = append(d.Notes, in.notes...)
	return d
}
