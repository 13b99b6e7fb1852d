package diagnose

import (
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
	"github.com/memdoctor/memdoctor/session"
)

// Breakdown splits resident memory into where it goes, at the RSS peak and at the end.
type Breakdown struct {
	Peak   *breakdown.At `json:"peak,omitempty"`
	Latest *breakdown.At `json:"latest,omitempty"`
}

// computeBreakdown returns the breakdown at the RSS peak and at the last reading.
func computeBreakdown(in *Input) Breakdown {
	var b Breakdown
	if len(in.Proc) > 0 {
		peak := 0
		for i, p := range in.Proc {
			if p.RSSBytes > in.Proc[peak].RSSBytes {
				peak = i
			}
		}
		b.Peak = in.BreakdownAt(in.Proc[peak].T, &in.Proc[peak].Proc)
		last := len(in.Proc) - 1
		b.Latest = in.BreakdownAt(in.Proc[last].T, &in.Proc[last].Proc)
		return b
	}
	if len(in.Go) > 0 { // a remote target: only the Go side is known
		peak := 0
		for i, g := range in.Go {
			if g.RuntimeResident() > in.Go[peak].RuntimeResident() {
				peak = i
			}
		}
		b.Peak = in.BreakdownAt(in.Go[peak].T, nil)
		b.Latest = in.BreakdownAt(in.Go[len(in.Go)-1].T, nil)
	}
	return b
}

// BreakdownAt splits memory at t, with p the /proc reading at t (nil when remote) and the
// Go reading nearest in time.
func (in *Input) BreakdownAt(t time.Time, p *session.Proc) *breakdown.At {
	var b breakdown.At
	if g, ok := in.nearestGo(t); ok {
		var live uint64
		pts, src := in.LiveHeap()
		if v, ok := valueAt(pts, g.T); ok {
			live = uint64(v.V)
		}
		b = breakdown.Compute(t, p, &g.GoMem, live, src)
		b.GoSkewSeconds = absDur(g.T.Sub(t)).Seconds()
	} else {
		b = breakdown.Compute(t, p, nil, 0, "")
	}
	var cg *session.Cgroup
	if c, ok := in.nearestCgroup(t); ok {
		cg = &c.Cgroup
	}
	b.SetLimits(cg, in.Budget)
	return &b
}
