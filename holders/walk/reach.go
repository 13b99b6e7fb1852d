package walk

import "math/bits"

// bitset is a set of positions (or vertices), one bit each.
type bitset []uint64

func newBitset(n int) bitset       { return make(bitset, (n+63)/64) }
func (b bitset) has(i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i uint32)      { b[i/64] |= 1 << (i % 64) }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// maxSweeps bounds the passes leadsTo makes over the edges before it builds the reverse edges.
const maxSweeps = 6

// leadsTo marks the objects from which some path leads to one of the targets (the targets
// included): every path from a root to a target runs through them alone, so the most readable
// paths and the dominators of the targets are found among them. The walk keeps only the edges
// out of each object, so the set is found by sweeping the objects in reverse order (an object
// found by the walk after its parent is swept first) until a sweep adds nothing; a graph whose
// paths to the targets go back up through many objects found earlier, which would take many
// sweeps, gets its reverse edges built instead.
func (g *graph) leadsTo(targets []uint32) (bitset, error) {
	lead := newBitset(int(g.n))
	for _, t := range targets {
		lead.set(t)
	}
	for sweep := 0; ; sweep++ {
		if sweep == maxSweeps {
			return g.leadsToByReverse(targets)
		}
		changed := false
		for p := int64(g.n) - 1; p >= 0; p-- {
			q := uint32(p)
			if lead.has(q) {
				continue
			}
			for e := g.edgeStart[q]; e < g.edgeStart[q+1]; e++ {
				if lead.has(g.edges[e>>20][e&edgeChunkM]) {
					lead.set(q)
					changed = true
					break
				}
			}
		}
		if !changed {
			return lead, nil
		}
	}
}

// leadsToByReverse is leadsTo through the reverse edges: from the targets back to every object
// that points to one already found. The reverse edges take as much memory as the edges, for
// the moment it runs.
func (g *graph) leadsToByReverse(targets []uint32) (bitset, error) {
	start, free1, err := words(int(g.n) + 1)
	if err != nil {
		return nil, err
	}
	defer free1()
	from, free2, err := words(g.nedges)
	if err != nil {
		return nil, err
	}
	defer free2()
	// Count each object's parents, then place them.
	for i := 0; i < g.nedges; i++ {
		start[g.edges[i>>20][i&edgeChunkM]]++
	}
	sum := uint32(0)
	for p := range start {
		c := start[p]
		start[p] = sum
		sum += c
	}
	for p := uint32(0); p < g.n; p++ {
		for e := g.edgeStart[p]; e < g.edgeStart[p+1]; e++ {
			c := g.edges[e>>20][e&edgeChunkM]
			from[start[c]] = p
			start[c]++
		}
	}
	// start[c] now ends c's parents: they begin where c-1's end.
	lead := newBitset(int(g.n))
	stack := make([]uint32, 0, len(targets))
	for _, t := range targets {
		if !lead.has(t) {
			lead.set(t)
			stack = append(stack, t)
		}
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		lo := uint32(0)
		if c > 0 {
			lo = start[c-1]
		}
		for _, p := range from[lo:start[c]] {
			if !lead.has(p) {
				lead.set(p)
				stack = append(stack, p)
			}
		}
	}
	return lead, nil
}
