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

// spread reports a growth (diff) the function the sites share (sh) holds the half of or
// more, of what the heap grew between the profiles, that no site holds the half of what it
// holds: that function is named first among the culprits. (What sites grew by sums the
// rises of sites whose memory is in flight too, a draw at each GC: the heap's own growth is
// the measure.)
func spread(diff *facts.SiteDiff, sh *facts.Shared) bool {
	if sh == nil || diff == nil {
		return false
	}
	grew := diff.NewTotal - diff.OldTotal
	if grew <= 0 || 2*sh.Caller.Value < grew {
		return false
	}
	return len(diff.ByFunction) == 0 || 2*diff.ByFunction[0].Delta < sh.Caller.Value
}

// withShared names the function the growing sites share first, when the growth is spread
// over them (judged once the process settled, when it has: a start-up's loading is no
// growth), and keeps at most th.Max culprits.
func withShared(fs *facts.Facts, sites []Culprit, th *Culprits) []Culprit {
	diff, sh := fs.LeakSites.Diff, fs.LeakSites.Shared
	if hg := fs.Growth; hg != nil {
		diff, sh = hg.InUse, hg.Shared
	}
	if !spread(diff, sh) {
		return sites
	}
	return sharedFirst(sites, sharedCulprit(sh, diff.Growth), th)
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
