package culprit

import (
	"cmp"
	"slices"
	"strings"
)

// SiteDelta is the change of one goroutine site between two goroutine profiles.
type SiteDelta struct {
	Site      Site     `json:"site"` // the program's own frame where they wait
	State     string   `json:"state,omitempty"`
	Blocking  string   `json:"blocking"`
	CreatedBy string   `json:"created_by,omitempty"`
	Old       int      `json:"old"`
	New       int      `json:"new"`
	Delta     int      `json:"delta"`
	Stack     []string `json:"stack,omitempty"`
}

// GoroutineDiff compares two goroutine profiles by site: the sites whose goroutines grew,
// most first, then those that shrank, most first.
type GoroutineDiff struct {
	OldTotal  int         `json:"old_total"`
	NewTotal  int         `json:"new_total"`
	Growth    int         `json:"growth"`    // the sum of the positive deltas
	Shrinkage int         `json:"shrinkage"` // the sum of the negative deltas, as a positive number
	Grew      []SiteDelta `json:"grew"`
	Shrank    []SiteDelta `json:"shrank"`
	Same      int         `json:"same"` // sites present in both with the same count
}

// DiffSites compares the goroutine groups of two profiles (or dumps) by site: the wait
// state and the program's own frame where they wait (see GroupBySite), so that the two may
// come from different processes or formats. A proto profile records no wait state: when one
// side has none (a proto profile against a debug=2 dump), sites match by frame alone.
func DiffSites(old, new []GoroutineGroup) *GoroutineDiff {
	o, n := GroupBySite(old), GroupBySite(new)
	keyOf := func(g SiteGroup) string { return g.SiteKey }
	if !hasStates(o) || !hasStates(n) {
		keyOf = func(g SiteGroup) string { _, k, _ := strings.Cut(g.SiteKey, "|"); return k }
	}
	d := &GoroutineDiff{}
	byKey := make(map[string]*SiteDelta, len(o)+len(n))
	var order []string
	add := func(g SiteGroup, count int, isNew bool) {
		k := keyOf(g)
		sd, ok := byKey[k]
		if !ok {
			sd = &SiteDelta{Site: g.Culprit, State: g.State, Blocking: g.Blocking, CreatedBy: g.CreatedBy, Stack: g.Stack}
			byKey[k] = sd
			order = append(order, k)
		}
		if isNew {
			sd.New += count
			sd.Stack = g.Stack // the newer stack represents the site
			if g.State != "" {
				sd.State = g.State
			}
		} else {
			sd.Old += count
		}
	}
	for _, g := range o {
		d.OldTotal += g.Count
		add(g, g.Count, false)
	}
	for _, g := range n {
		d.NewTotal += g.Count
		add(g, g.Count, true)
	}
	for _, k := range order {
		sd := byKey[k]
		sd.Delta = sd.New - sd.Old
		switch {
		case sd.Delta > 0:
			d.Growth += sd.Delta
			d.Grew = append(d.Grew, *sd)
		case sd.Delta < 0:
			d.Shrinkage -= sd.Delta
			d.Shrank = append(d.Shrank, *sd)
		default:
			d.Same++
		}
	}
	slices.SortStableFunc(d.Grew, func(a, b SiteDelta) int { return cmp.Compare(b.Delta, a.Delta) })
	slices.SortStableFunc(d.Shrank, func(a, b SiteDelta) int { return cmp.Compare(a.Delta, b.Delta) })
	return d
}

// hasStates reports whether any site records a wait state.
func hasStates(sites []SiteGroup) bool {
	for _, s := range sites {
		if s.State != "" {
			return true
		}
	}
	return false
}
