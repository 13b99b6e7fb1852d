package culprit

import (
	"cmp"
	"slices"
	"strconv"
)

// SiteGroup is the goroutines blocked at one site of the program: groups whose stacks differ
// only above it (a recursive walk reaching the same line at different depths, different
// callers of one helper) or in runtime frames are one site, so that one leak is one culprit.
type SiteGroup struct {
	GoroutineGroup        // the site's largest member (its Key, Stack, CreatedBy), with the totals
	Members        int    // how many stack groups the site merges
	SiteKey        string // state | function:line of the culprit frame
	repCount       int    // the representative member's own count
}

// GroupBySite merges goroutine groups by their culprit site (the program's own frame where
// they block, with the wait state). Count and Leaked are the sums, WaitMinutes the longest;
// the representative stack is the largest member's. The result is sorted by count, most first.
func GroupBySite(groups []GoroutineGroup) []SiteGroup {
	bySite := make(map[string]*SiteGroup, len(groups))
	var order []string
	for _, g := range groups {
		key := siteKey(g)
		sg, ok := bySite[key]
		switch {
		case !ok:
			sg = &SiteGroup{GoroutineGroup: g, SiteKey: key, repCount: g.Count}
			sg.Count, sg.Leaked, sg.WaitMinutes = 0, 0, 0
			bySite[key] = sg
			order = append(order, key)
		case g.Count > sg.repCount: // the largest member represents the site
			count, leaked, wait := sg.Count, sg.Leaked, sg.WaitMinutes
			sg.GoroutineGroup, sg.repCount = g, g.Count
			sg.Count, sg.Leaked, sg.WaitMinutes = count, leaked, wait
		}
		sg.Count += g.Count
		sg.Leaked += g.Leaked
		sg.WaitMinutes = max(sg.WaitMinutes, g.WaitMinutes)
		sg.Members++
	}
	out := make([]SiteGroup, 0, len(order))
	for _, k := range order {
		out = append(out, *bySite[k])
	}
	slices.SortStableFunc(out, func(a, b SiteGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.SiteKey, b.SiteKey))
	})
	return out
}

// siteKey identifies a site: the wait state and the culprit frame (the program's own, else
// the innermost non-runtime frame), by function and line. Goroutines that run (Running) are
// caught at whatever line they were running: their site is the function alone.
func siteKey(g GoroutineGroup) string {
	fn, line := g.Culprit.Function, g.Culprit.Line
	if fn == "" || fn == unknownFunction {
		fn, line = g.Blocking, 0
	}
	if g.Runs() {
		return "|" + fn + ":running"
	}
	return g.State + "|" + fn + ":" + strconv.FormatInt(line, 10)
}
