package walk

import (
	"slices"
	"sort"
	"strings"

	"github.com/memdoctor/memdoctor/holders"
)

// aggregator turns sampled objects into culprits and their aggregated paths, and works out
// what to cut.
type aggregator struct {
	g          *graph
	n          *namer
	opts       Options
	rate       uint64
	mainModule string
	groups     []culpritSamples
	lead       bitset // the objects that lead to a culprit's sampled object (leadsTo)
	notes      []string
}

// culpritSamples is one culprit site and its sampled objects, each with the in-use bytes it
// stands for.
type culpritSamples struct {
	site    string
	samples []sample
	sizes   []uint64 // each allocation's size, as the profile records it
	weights []float64
}

// group groups the samples by culprit site: the sites asked for, else the TopSites sites that
// hold the most sampled bytes.
func (a *aggregator) group(samples []sample, buckets map[uint64]*bucketInfo) []culpritSamples {
	groups := map[string][]sample{}
	var order []string
	if len(a.opts.Sites) > 0 {
		seen := map[string]bool{}
		for _, site := range a.opts.Sites {
			if seen[site] {
				continue // named twice (by --site and by a diagnosis): counted once
			}
			seen[site] = true
			order = append(order, site)
			for _, s := range samples {
				if b := buckets[s.bucket]; b != nil && stackHas(b.stack, site) {
					groups[site] = append(groups[site], s)
				}
			}
		}
	} else {
		bytes := map[string]uint64{}
		for _, s := range samples {
			b := buckets[s.bucket]
			if b == nil {
				continue
			}
			site := siteOf(b.stack, a.mainModule)
			groups[site] = append(groups[site], s)
			bytes[site] += uint64(weight(b.size, a.rate))
		}
		order = sortedKeys(bytes)
		if len(order) > a.opts.TopSites {
			order = order[:a.opts.TopSites]
		}
	}
	out := make([]culpritSamples, 0, len(order))
	for _, site := range order {
		c := culpritSamples{site: site, samples: groups[site]}
		for _, s := range c.samples {
			size := s.size
			if b := buckets[s.bucket]; b != nil && b.size > 0 {
				size = b.size
			}
			c.sizes = append(c.sizes, max(size, 1))
			c.weights = append(c.weights, weight(size, a.rate))
		}
		out = append(out, c)
	}
	a.groups = out
	return out
}

// choose finds the part of the graph that leads to the culprits' sampled objects and gives each
// of them its most readable path (choosePaths).
func (a *aggregator) choose() error {
	var targets []uint32
	for _, c := range a.groups {
		for _, s := range c.samples {
			if p := a.g.pos[s.id]; p != 0 {
				targets = append(targets, p-1)
			}
		}
	}
	lead, err := a.g.leadsTo(targets)
	if err != nil {
		return err
	}
	a.lead = lead
	maxNamed := a.opts.MaxNamed
	if maxNamed <= 0 {
		maxNamed = maxNamedFor(a.g.bytes)
	}
	if note := a.n.choosePaths(lead, targets, maxNamed); note != "" {
		a.notes = append(a.notes, note)
	}
	return nil
}

// culprits names and aggregates the paths of each culprit's sampled objects.
func (a *aggregator) culprits() []holders.Culprit {
	out := make([]holders.Culprit, 0, len(a.groups))
	for _, c := range a.groups {
		out = append(out, a.culprit(c))
	}
	return out
}

// stackHas says whether a frame of the stack is the function site: its full name, or the end
// of it after a dot or a slash.
func stackHas(stack []string, site string) bool {
	for _, f := range stack {
		if f == site || strings.HasSuffix(f, "."+site) || strings.HasSuffix(f, "/"+site) {
			return true
		}
	}
	return false
}

type pathAgg struct {
	holders.Path
	gs map[int64]bool
}

func (a *aggregator) culprit(cs culpritSamples) holders.Culprit {
	c := holders.Culprit{Site: cs.site, Samples: len(cs.samples)}
	paths := map[string]*pathAgg{}
	var reachable float64
	for i, s := range cs.samples {
		w := cs.weights[i]
		objs := w / float64(cs.sizes[i])
		c.Bytes += w
		c.Objects += objs
		p := a.g.pos[s.id]
		if p == 0 {
			c.GarbageSamples++
			c.GarbageBytes += w
			continue
		}
		reachable += w
		m := a.n.path(p - 1)
		root, hops := m.r.root, m.hops()
		key := root.Kind + "\x00" + root.Label() + "\x00" + m.aggregateKey()
		pa := paths[key]
		if pa == nil {
			pa = &pathAgg{Path: holders.Path{Root: root, Hops: hops, Expr: root.Label() + exprOf(hops)}, gs: map[int64]bool{}}
			pa.Root.Goroutine = 0
			paths[key] = pa
		} else if merged, ok := mergeHops(pa.Hops, hops); ok {
			pa.Hops, pa.Expr = merged, root.Label()+exprOf(merged)
		}
		pa.Samples++
		pa.Bytes += w
		pa.Objects += objs
		if root.Goroutine != 0 {
			pa.gs[root.Goroutine] = true
		}
	}
	all := make([]*pathAgg, 0, len(paths))
	for _, p := range paths {
		all = append(all, p)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Bytes != all[j].Bytes {
			return all[i].Bytes > all[j].Bytes
		}
		return all[i].Expr < all[j].Expr
	})
	var covered float64
	for _, p := range all {
		if len(c.Paths) >= a.opts.MaxPaths || (reachable > 0 && covered >= a.opts.Coverage*reachable) {
			break
		}
		covered += p.Bytes
		if reachable > 0 {
			p.Share = p.Bytes / reachable
		}
		for id := range p.gs {
			p.Goroutines = append(p.Goroutines, id)
		}
		sort.Slice(p.Goroutines, func(i, j int) bool { return p.Goroutines[i] < p.Goroutines[j] })
		if len(p.Goroutines) > 10 {
			p.Goroutines = p.Goroutines[:10]
		}
		c.Paths = append(c.Paths, p.Path)
	}
	if reachable > 0 {
		c.Covered = covered / reachable
	}
	return c
}

func exprOf(hops []holders.Hop) string {
	var b strings.Builder
	for _, h := range hops {
		b.WriteString(h.Expr)
	}
	return b.String()
}

// mergeHops shows two paths of one key as one: a repeated step with the fields of both, and
// the ellipsis where either repeats; ok is false when nothing changes.
func mergeHops(a, b []holders.Hop) ([]holders.Hop, bool) {
	if len(a) != len(b) {
		return a, false
	}
	var out []holders.Hop
	for i := range a {
		if a[i].Expr == b[i].Expr {
			continue
		}
		if out == nil {
			out = slices.Clone(a)
		}
		fa, fb := fieldsOf(a[i].Expr), fieldsOf(b[i].Expr)
		switch {
		case fa != nil && fb != nil:
			out[i].Expr = recursiveStep(append(fa, fb...))
		case strings.HasSuffix(b[i].Expr, "…"):
			out[i].Expr = b[i].Expr
		}
	}
	return out, out != nil
}
