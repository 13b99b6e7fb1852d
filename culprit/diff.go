package culprit

import (
	"errors"
	"fmt"

	"github.com/google/pprof/profile"
)

// Delta is the change of one culprit site between two profiles.
type Delta struct {
	Site  Site     `json:"site"`
	Old   int64    `json:"old"`
	New   int64    `json:"new"`
	Delta int64    `json:"delta"`
	Share float64  `json:"share"` // Delta / total positive growth (0..1); 0 when Delta <= 0
	Stack []string `json:"stack,omitempty"`
	// Observer is the part of Delta made by the observer's stacks (Observer): what profilers
	// reading the process (its pprof handlers, runtime/pprof, memdoctor's agent) made it
	// allocate or hold at this site.
	Observer int64 `json:"-"`
}

// DiffResult is what grew between two profiles of the same kind.
type DiffResult struct {
	Type       string  `json:"type"`
	Unit       string  `json:"unit"`
	OldTotal   int64   `json:"old_total"`
	NewTotal   int64   `json:"new_total"`
	Growth     int64   `json:"growth"`      // sum of the positive deltas of ByFunction
	Shrinkage  int64   `json:"shrinkage"`   // sum of the negative deltas of ByFunction, as a positive number
	LineGrowth int64   `json:"line_growth"` // sum of the positive deltas of ByLine
	ByFunction []Delta `json:"by_function"` // sorted by Delta desc; Share is relative to Growth
	ByLine     []Delta `json:"by_line"`     // sorted by Delta desc; Share is relative to LineGrowth
	// ByCaller is what grew under each function of the program's own code, its callees
	// included (as pprof's -cum): the functions that growing sites share. Only those that
	// grew over two sites or more, largest first.
	ByCaller []Caller `json:"-"`
	// Observer is the sum of the positive Delta.Observer of ByFunction: what the observer's
	// stacks (Observer) allocated or grew between the profiles, counted in Growth too.
	Observer int64    `json:"-"`
	Warnings []string `json:"warnings,omitempty"`
}

// Diff compares sample type typ of two profiles of the same kind: new minus
// old, per culprit site. For alloc_* (cumulative since the process started)
// the difference is what was allocated between the two snapshots; for inuse_*
// it is the growth (negative = shrank). Sites are matched by function name and
// line, never by address, so the profiles may come from different processes
// or builds; Warnings says when the comparison is suspect (a restart in
// between, different binaries, delta profiles, identical snapshots).
//
// Delta.Stack is the stack that moved the site the most in the direction of
// its Delta.
func Diff(old, new *profile.Profile, typ string, opts Options) (*DiffResult, error) {
	if old == nil || new == nil {
		return nil, errors.New("diff needs two profiles, got nil")
	}
	oi, err := SampleIndex(old, typ)
	if err != nil {
		return nil, fmt.Errorf("OLD profile: %w", err)
	}
	ni, err := SampleIndex(new, typ)
	if err != nil {
		return nil, fmt.Errorf("NEW profile: %w", err)
	}
	ot, nt := old.SampleType[oi], new.SampleType[ni]
	if ot.Type != nt.Type || ot.Unit != nt.Unit {
		return nil, fmt.Errorf("OLD's sample type %s/%s and NEW's %s/%s differ: diff two profiles of the same kind",
			ot.Type, ot.Unit, nt.Type, nt.Unit)
	}
	c := newCollapser(opts)
	r := &DiffResult{Type: nt.Type, Unit: nt.Unit}
	r.OldTotal = c.add(old, oi, 0)
	r.NewTotal = c.add(new, ni, 1)
	byFunc, byLine := rankSites(c.stacks)
	r.ByFunction, r.Growth = c.deltas(byFunc)
	for _, d := range r.ByFunction {
		if d.Delta < 0 {
			r.Shrinkage -= d.Delta
		}
		r.Observer += max(d.Observer, 0)
	}
	r.ByLine, r.LineGrowth = c.deltas(byLine)
	r.ByCaller = c.callers(2, true)
	r.Warnings = diffWarnings(old, new, r)
	return r, nil
}

// deltas converts ranked sites and returns the sum of their positive deltas.
func (c *collapser) deltas(sites []*siteSum) ([]Delta, int64) {
	var growth int64
	for _, s := range sites {
		if d := s.delta(); d > 0 {
			growth += d
		}
	}
	out := make([]Delta, len(sites))
	for i, s := range sites {
		d := Delta{Site: s.site, Old: s.old, New: s.new, Delta: s.delta(), Stack: c.stackOf(s), Observer: s.observed}
		if d.Delta > 0 {
			d.Share = float64(d.Delta) / float64(growth)
		}
		out[i] = d
	}
	return out, growth
}
