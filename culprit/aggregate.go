package culprit

import (
	"errors"

	"github.com/google/pprof/profile"
)

// Entry is one culprit site of a Table.
type Entry struct {
	Site  Site
	Value int64    // bytes or count, as the sample type says
	Stack []string // the heaviest stack contributing to this site (leaf first)
}

// Table aggregates one sample type of a profile by culprit site.
type Table struct {
	Type, Unit string
	Total      int64   // sum of all sample values
	ByFunction []Entry // aggregated by Site.Function, sorted by Value desc (ties: name)
	ByLine     []Entry // aggregated by function and line, sorted desc
	// ByCaller sums the stacks by each function of the program's own code they pass
	// through (as pprof's -cum), largest first, without their stacks.
	ByCaller []Caller
}

// Aggregate sums sample type typ (see SampleIndex) of p by culprit site. For
// a ByFunction entry, Site's File and Line are those of the function's
// heaviest line.
func Aggregate(p *profile.Profile, typ string, opts Options) (*Table, error) {
	if p == nil {
		return nil, errors.New("nil profile")
	}
	idx, err := SampleIndex(p, typ)
	if err != nil {
		return nil, err
	}
	c := newCollapser(opts)
	total := c.add(p, idx, 1)
	byFunc, byLine := rankSites(c.stacks)
	st := p.SampleType[idx]
	return &Table{
		Type:       st.Type,
		Unit:       st.Unit,
		Total:      total,
		ByFunction: c.entries(byFunc),
		ByLine:     c.entries(byLine),
		ByCaller:   c.callers(1, false),
	}, nil
}

func (c *collapser) entries(sites []*siteSum) []Entry {
	out := make([]Entry, len(sites))
	for i, s := range sites {
		out[i] = Entry{Site: s.site, Value: s.delta(), Stack: c.stackOf(s)}
	}
	return out
}
