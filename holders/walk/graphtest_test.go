package walk

import "math/rand/v2"

// testGraph builds a graph in memory: objects 0..n-1 (slot id = position, 16 bytes each, in one
// span), the edges out of each, and roots, each a frame of its own pointing at an object.
func testGraph(out [][]uint32, roots []uint32) *graph {
	n := uint32(len(out))
	h := &heap{spans: []span{{base: 0x10000, size: uint64(n) * 16, elemSize: 16, nelems: uint64(n)}}}
	g := &graph{h: h, n: n, pos: make([]uint32, n), order: make([]uint32, n), parent: make([]uint32, n),
		parentOff: make([]uint32, n), edgeStart: make([]uint32, n+1)}
	var edges []uint32
	for p := range n {
		g.pos[p], g.order[p] = p+1, p
		g.edgeStart[p] = uint32(len(edges))
		edges = append(edges, out[p]...)
		g.bytes += 16
	}
	g.edgeStart[n] = uint32(len(edges))
	g.edges = [][]uint32{edges}
	g.nedges = len(edges)
	for i, t := range roots {
		g.roots = append(g.roots, root{kind: rootStack, target: t, ref: int32(i)})
	}
	return g
}

// randomGraph is a random graph of n objects and about n*deg edges (cycles and self-edges
// included), with a few roots.
func randomGraph(rng *rand.Rand, n int, deg float64) ([][]uint32, []uint32) {
	out := make([][]uint32, n)
	for range int(float64(n) * deg) {
		u := rng.IntN(n)
		out[u] = append(out[u], uint32(rng.IntN(n)))
	}
	var roots []uint32
	for range 1 + rng.IntN(4) {
		roots = append(roots, uint32(rng.IntN(n)))
	}
	return out, roots
}

// reachable lists what the roots reach in out, with the object cut (none: none) and the roots
// dropped.
func reachable(out [][]uint32, roots []uint32, cut uint32, drop map[int]bool) []bool {
	seen := make([]bool, len(out))
	var stack []uint32
	for i, r := range roots {
		if !drop[i] && r != cut && !seen[r] {
			seen[r] = true
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range out[v] {
			if w != cut && !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return seen
}
