package rule

import (
	"github.com/memdoctor/memdoctor/facts"
)

// Growth spread over many sites. A request path that keeps a little at each of many sites
// (the handler, the headers net/http parsed, a session store, its registry) keeps all of it
// under the function those sites share, though no site alone grows by what matters: growth
// is judged by that function as well as site by site.

// sharedCulprit is the function the growing sites share, as a culprit: Bytes is what grew
// under it, its share of the growth growth.
func sharedCulprit(sh *facts.Shared, growth int64) Culprit {
	c := sh.Caller
	return Culprit{Function: c.Function, Bytes: c.Value, Share: float64(c.Value) / float64(max(growth, 1)),
		Stack: c.Stack, Own: true, Sites: c.Sites}
}

// spread reports a growth no site holds the half of, that the function the sites share
// does: that function is named first among the culprits.
func spread(ls *facts.LeakSites, sites []Culprit) bool {
	sh := ls.Shared
	if sh == nil || ls.Diff == nil || ls.Diff.Growth <= 0 || 2*sh.Caller.Value < ls.Diff.Growth {
		return false
	}
	return len(sites) == 0 || 2*sites[0].Bytes < ls.Diff.Growth
}

// withShared names the function the growing sites share first, when the growth is spread
// over them, and keeps at most th.Max culprits.
func withShared(ls *facts.LeakSites, sites []Culprit, th *Culprits) []Culprit {
	if !spread(ls, sites) {
		return sites
	}
	return sharedFirst(sites, sharedCulprit(ls.Shared, ls.Diff.Growth), th)
}

// sharedFirst puts the function the sites share first among the culprits, in place of its
// own entry as a site (what grew under it includes what it allocated itself), and keeps at
// most th.Max.
func sharedFirst(cs []Culprit, shared Culprit, th *Culprits) []Culprit {
	out := []Culprit{shared}
	for _, c := range cs {
		if c.Function != shared.Function {
			out = append(out, c)
		} else {
			out[0].File, out[0].Line = c.File, c.Line
		}
	}
	return out[:min(len(out), th.Max)]
}

// doubled reports heap profiles' totals (at least minBurst of them) that rose through every
// profile (each reading that differs from the one before is higher) to more than twice the
// first, by MinAbs at least: whatever the sites, the heap in use more than doubled.
func doubled(totals []facts.Point, lim Limits) bool {
	obs := facts.Observed(totals)
	if len(totals) < minBurst || len(obs) < minBurst {
		return false
	}
	for i := 1; i < len(obs); i++ {
		if obs[i].V <= obs[i-1].V {
			return false
		}
	}
	first, last := obs[0].V, obs[len(obs)-1].V
	return last > 2*first && last-first >= lim.MinAbs
}
