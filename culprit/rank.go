package culprit

import (
	"cmp"
	"slices"
)

// siteSum is one culprit site (a function, or a line of a function) with the
// values of the stacks attributed to it.
type siteSum struct {
	site     Site
	old, new int64
	observed int64     // the part of new-old from the observer's stacks (stackSum.observer)
	best     *stackSum // the stack that moved this site the most
	rep      *siteSum  // for a function: its line that moved it the most
}

func (s *siteSum) delta() int64 { return s.new - s.old }

// outweighs reports whether weight a (tie-broken by key ka) represents a site
// moving in direction dir better than weight b (key kb): the largest weight
// for a site that grew, the most negative one for a site that shrank.
func outweighs(dir, a, b int64, ka, kb string) bool {
	if dir < 0 {
		a, b = -a, -b
	}
	return a > b || a == b && ka < kb
}

func (s *siteSum) considerStack(st *stackSum) {
	if s.best == nil || outweighs(s.delta(), st.weight(), s.best.weight(), st.key, s.best.key) {
		s.best = st
	}
}

func (s *siteSum) considerLine(l *siteSum) {
	if s.rep == nil || outweighs(s.delta(), l.delta(), s.rep.delta(), l.best.key, s.rep.best.key) {
		s.rep = l
	}
}

type lineKey struct {
	fn   string
	line int64
}

// rankSites sums stacks by culprit function and by culprit line (function and
// line number: the file is implied by the function, and ignoring it keeps
// sites aligned between builds made in different directories). Sites whose
// values are all zero are dropped. Both lists are sorted by delta, largest
// first, then by function and line.
func rankSites(stacks map[string]*stackSum) (byFunc, byLine []*siteSum) {
	lines := make(map[lineKey]*siteSum)
	funcs := make(map[string]*siteSum)
	for _, st := range stacks {
		k := lineKey{st.site.Function, st.site.Line}
		ls := lines[k]
		if ls == nil {
			ls = &siteSum{}
			lines[k] = ls
		}
		ls.old += st.v[0]
		ls.new += st.v[1]
		if st.observer {
			ls.observed += st.weight()
		}
		fs := funcs[k.fn]
		if fs == nil {
			fs = &siteSum{}
			funcs[k.fn] = fs
		}
		fs.old += st.v[0]
		fs.new += st.v[1]
		if st.observer {
			fs.observed += st.weight()
		}
	}
	for _, st := range stacks {
		lines[lineKey{st.site.Function, st.site.Line}].considerStack(st)
		funcs[st.site.Function].considerStack(st)
	}
	for _, ls := range lines {
		ls.site = ls.best.site
		if ls.old != 0 || ls.new != 0 {
			byLine = append(byLine, ls)
		}
	}
	for _, ls := range byLine {
		funcs[ls.site.Function].considerLine(ls)
	}
	for _, fs := range funcs {
		if fs.rep == nil || fs.old == 0 && fs.new == 0 {
			continue
		}
		fs.site = fs.rep.site
		byFunc = append(byFunc, fs)
	}
	sortSites(byFunc)
	sortSites(byLine)
	return byFunc, byLine
}

func sortSites(s []*siteSum) {
	slices.SortFunc(s, func(a, b *siteSum) int {
		return cmp.Or(
			cmp.Compare(b.delta(), a.delta()),
			cmp.Compare(a.site.Function, b.site.Function),
			cmp.Compare(a.site.Line, b.site.Line),
		)
	})
}

// stackOf returns the function names of s's most representative stack.
func (c *collapser) stackOf(s *siteSum) []string {
	if s.best == nil {
		return nil
	}
	return c.names(s.best)
}
