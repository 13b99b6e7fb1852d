package walk

import (
	"math/rand/v2"
	"testing"
)

// adjFlow is a flow graph held as adjacency lists, for tests.
type adjFlow struct{ out, in [][]uint32 }

func newAdjFlow(n int) *adjFlow { return &adjFlow{out: make([][]uint32, n), in: make([][]uint32, n)} }

func (f *adjFlow) edge(u, v uint32) {
	f.out[u] = append(f.out[u], v)
	f.in[v] = append(f.in[v], u)
}
func (f *adjFlow) vertices() int { return len(f.out) }
func (f *adjFlow) succ(v uint32, fn func(uint32)) {
	for _, w := range f.out[v] {
		fn(w)
	}
}
func (f *adjFlow) pred(v uint32, fn func(uint32)) {
	for _, u := range f.in[v] {
		fn(u)
	}
}

// reachWithout lists the vertices reached from the entry when cut is removed (none: nothing).
func (f *adjFlow) reachWithout(cut uint32) []bool {
	seen := make([]bool, len(f.out))
	if cut == 0 {
		return seen
	}
	stack := []uint32{0}
	seen[0] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range f.out[v] {
			if w != cut && !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return seen
}

// bruteIdom finds each vertex's immediate dominator from the definition: d dominates w when w
// is unreached with d removed; the immediate one is the dominator every other dominator of w
// dominates.
func bruteIdom(f *adjFlow) []uint32 {
	n := len(f.out)
	reach := f.reachWithout(none)
	doms := make([][]bool, n) // doms[d][w]: d dominates w
	for d := range n {
		r := f.reachWithout(uint32(d))
		doms[d] = make([]bool, n)
		for w := range n {
			doms[d][w] = reach[w] && !r[w]
		}
	}
	idom := make([]uint32, n)
	for w := range n {
		idom[w] = none
		if w == 0 || !reach[w] {
			continue
		}
		for d := range n {
			if d == w || !doms[d][w] {
				continue
			}
			// d is the immediate one when every other strict dominator of w dominates d.
			imm := true
			for e := range n {
				if e != w && e != d && doms[e][w] && !doms[e][d] {
					imm = false
					break
				}
			}
			if imm {
				idom[w] = uint32(d)
			}
		}
	}
	return idom
}

// TestDominatorsAgainstBruteForce: on random graphs (sparse and dense, with cycles, self-loops,
// unreached vertices), Lengauer-Tarjan's immediate dominators are the definition's, and the
// preorder puts every vertex after its immediate dominator.
func TestDominatorsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 22))
	for trial := range 400 {
		n := 2 + rng.IntN(40)
		f := newAdjFlow(n)
		edges := rng.IntN(n * (1 + trial%4))
		for range edges {
			f.edge(uint32(rng.IntN(n)), uint32(rng.IntN(n)))
		}
		d, err := dominators(f)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteIdom(f)
		for w := range n {
			if d.idom[w] != want[w] {
				t.Fatalf("trial %d (%d vertices, edges %v): idom(%d) = %d, want %d", trial, n, f.out, w, int32(d.idom[w]), int32(want[w]))
			}
		}
		seen := make([]bool, n)
		for i, v := range d.order {
			if i > 0 && !seen[d.idom[v]] {
				t.Fatalf("trial %d: vertex %d comes before its dominator %d", trial, v, d.idom[v])
			}
			seen[v] = true
		}
		start, kids, err := d.children()
		if err != nil {
			t.Fatal(err)
		}
		for v := range n {
			for _, k := range kids[start[v]:start[v+1]] {
				if d.idom[k] != uint32(v) {
					t.Fatalf("trial %d: %d listed under %d, its dominator is %d", trial, k, v, d.idom[k])
				}
			}
		}
		d.free()
	}
}
