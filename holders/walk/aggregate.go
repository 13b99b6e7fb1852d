package walk

import (
	"fmt"
	"github.com/memdoctor/memdoctor/holders"
	"sort"
	"strings"
)

// aggregator turns sampled objects into culprits and their aggregated paths.
type aggregator struct {
	g          *graph
	n          *namer
	opts       Options
	rate       uint64
	mainModule string
	kept       [][]*pathAgg // per culprit, the paths reported
}

// culprits groups the samples by culprit site and names what holds each.
func (a *aggregator) culprits(samples []sample, buckets map[uint64]*bucketInfo) []holders.Culprit {
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
	out := make([]holders.Culprit, 0, len(order))
	for _, site := range order {
		out = append(out, a.culprit(site, groups[site], buckets))
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
	spans []rootSpan
	gs    map[int64]bool
}

func (a *aggregator) culprit(site string, samples []sample, buckets map[uint64]*bucketInfo) holders.Culprit {
	c := holders.Culprit{Site: site, Samples: len(samples)}
	paths := map[string]*pathAgg{}
	var reachable float64
	for _, s := range samples {
		size := s.size
		if b := buckets[s.bucket]; b != nil && b.size > 0 {
			size = b.size
		}
		w := weight(size, a.rate)
		objs := w / float64(size)
		c.Bytes += w
		c.Objects += objs
		p := a.g.pos[s.id]
		if p == 0 {
			c.GarbageSamples++
			c.GarbageBytes += w
			continue
		}
		reachable += w
		root, hops, span := a.n.path(p - 1)
		key := root.Kind + "\x00" + root.Label() + "\x00" + exprOf(hops)
		pa := paths[key]
		if pa == nil {
			pa = &pathAgg{Path: holders.Path{Root: root, Hops: hops, Expr: root.Label() + exprOf(hops)}, gs: map[int64]bool{}}
			pa.Root.Goroutine = 0
			paths[key] = pa
		}
		pa.Samples++
		pa.Bytes += w
		pa.Objects += objs
		pa.spans = append(pa.spans, span)
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
	var kept []*pathAgg
	for _, p := range all {
		if len(kept) >= a.opts.MaxPaths || (reachable > 0 && covered >= a.opts.Coverage*reachable) {
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
		kept = append(kept, p)
		c.Paths = append(c.Paths, p.Path)
	}
	if reachable > 0 {
		c.Covered = covered / reachable
	}
	a.kept = append(a.kept, kept)
	return c
}

// releases measures, for the roots of the heaviest paths, what letting go of each would free.
func (a *aggregator) releases(paths []*pathAgg) []holders.Release {
	var out []holders.Release
	seen := map[string]bool{}
	for _, p := range paths {
		if len(out) >= a.opts.TopRoots {
			break
		}
		label := p.Root.Label()
		switch n := len(p.gs); {
		case n == 1:
			for id := range p.gs {
				label += fmt.Sprintf(" in goroutine %d", id)
			}
		case n > 1:
			label += fmt.Sprintf(" in its %d goroutines", n)
		}
		if seen[label] {
			continue
		}
		seen[label] = true
		drop := map[int]bool{}
		for i, r := range a.g.roots {
			for _, s := range p.spans {
				if s.holds(r) {
					drop[i] = true
					break
				}
			}
		}
		bytes, objects := a.g.freedWithout(drop)
		out = append(out, holders.Release{Root: label, Bytes: bytes, Objects: objects})
	}
	return out
}

func exprOf(hops []holders.Hop) string {
	var b strings.Builder
	for _, h := range hops {
		b.WriteString(h.Expr)
	}
	return b.String()
}
