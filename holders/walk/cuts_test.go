package walk

import (
	"math/rand/v2"
	"testing"
)

// TestPickCutsAgainstBruteForce: on random graphs with random sampled objects, the first cut
// holds alone (its removal leaves unreached) the samples it says, more than half of the
// reachable ones, and every object that holds more than half alone lies on the way to it: it
// is the deepest. Each cut's samples are unreached once it is cut.
func TestPickCutsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 4))
	picks := 0
	for trial := range 500 {
		n := 2 + rng.IntN(50)
		out, roots := randomGraph(rng, n, 0.5+float64(trial%4)/2)
		reach := reachable(out, roots, none, nil)
		var samples []uint32
		for p := range n {
			if reach[p] && rng.IntN(3) == 0 {
				samples = append(samples, uint32(p))
			}
		}
		if len(samples) == 0 {
			continue
		}
		g := testGraph(out, roots)
		a := &aggregator{g: g}
		var err error
		if a.lead, err = g.leadsTo(samples); err != nil {
			t.Fatal(err)
		}
		s, err := a.buildSubgraph()
		if err != nil {
			t.Fatal(err)
		}
		d, err := dominators(s)
		if err != nil {
			t.Fatal(err)
		}
		start, kids, err := d.children()
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, s.vertices())
		count := make([]int32, s.vertices())
		for _, p := range samples {
			w[s.vertexOf(p)]++
			count[s.vertexOf(p)]++
		}
		for i := len(d.order) - 1; i > 0; i-- {
			v := d.order[i]
			w[d.idom[v]] += w[v]
			count[d.idom[v]] += count[v]
		}
		if int(w[0]) != len(samples) {
			t.Fatalf("trial %d: the entry holds %v of %d samples", trial, w[0], len(samples))
		}
		// held counts the samples that cutting an object (or dropping roots) leaves unreached.
		held := func(cut uint32, drop map[int]bool) int {
			r := reachable(out, roots, cut, drop)
			k := 0
			for _, p := range samples {
				if !r[p] {
					k++
				}
			}
			return k
		}
		got := pickCuts(d, start, kids, w, count, 3, func(uint32) bool { return false })
		for i, c := range got {
			var k int
			if c.v < s.firstObj() {
				drop := map[int]bool{}
				for _, ri := range s.groups[c.v-1] {
					drop[int(ri)] = true
				}
				k = held(none, drop)
			} else {
				k = held(s.objs[c.v-s.firstObj()], nil)
			}
			// A later cut counts what the earlier ones left; alone it may hold more.
			if (i == 0 && k != c.samples) || k < c.samples {
				t.Fatalf("trial %d: cut %d (vertex %d) says it holds %d samples; cutting it leaves %d unreached (edges %v, roots %v, samples %v)",
					trial, i, c.v, c.samples, k, out, roots, samples)
			}
		}
		if len(got) > 0 {
			picks++
			first := got[0]
			if 2*first.samples <= len(samples) {
				t.Fatalf("trial %d: the first cut holds %d of %d samples", trial, first.samples, len(samples))
			}
			for u := range uint32(n) {
				if !reach[u] || 2*held(u, nil) <= len(samples) {
					continue
				}
				if first.v < s.firstObj() {
					t.Fatalf("trial %d: object %d holds %d of %d samples alone, yet a root group is cut", trial, u, held(u, nil), len(samples))
				}
				fp := s.objs[first.v-s.firstObj()]
				if u != fp && reachable(out, roots, u, nil)[fp] {
					t.Fatalf("trial %d: object %d holds %d of %d samples alone but is not on the way to the cut %d (edges %v, roots %v)",
						trial, u, held(u, nil), len(samples), fp, out, roots)
				}
			}
		}
		d.free()
		s.free()
	}
	if picks < 100 {
		t.Errorf("only %d graphs had a cut: the test does not test", picks)
	}
}

// TestPickCuts: what to cut on shapes seen in real programs.
func TestPickCuts(t *testing.T) {
	// 0 server (held by root 0), 1 account (held by the server and by root 1, a client), 2 the
	// account's map, 3 its directory (internal), 4-5 groups (internal), 6-13 sampled keys; 14 a
	// slice of the server's with 15-16 sampled records.
	out := [][]uint32{
		0: {1, 14}, 1: {2}, 2: {3}, 3: {4, 5}, 4: {6, 7, 8, 9}, 5: {10, 11, 12, 13},
		14: {15, 16}, 15: nil, 16: nil,
	}
	for i := 6; i <= 13; i++ {
		out[i] = nil
	}
	roots := []uint32{0, 1}
	samples := []uint32{6, 7, 8, 9, 10, 11, 12, 13, 15, 16}
	internals := map[uint32]bool{3: true, 4: true, 5: true}
	cuts := runPick(t, out, roots, samples, internals)
	if len(cuts) != 2 || cuts[0].pos != 2 || cuts[0].samples != 8 || cuts[1].pos != 14 || cuts[1].samples != 2 {
		t.Errorf("want the account's map (8 samples) then the server's slice (2); got %+v", cuts)
	}
	// Each record held by two roots of its own: nothing holds them alone.
	out = [][]uint32{0: nil, 1: nil, 2: nil, 3: nil}
	cuts = runPick(t, out, []uint32{0, 1, 2, 3, 0, 1, 2, 3}, []uint32{0, 1, 2, 3}, nil)
	if len(cuts) != 0 {
		t.Errorf("records each held by two roots: want no cut, got %+v", cuts)
	}
	// One global array of pointers to every record: the root itself is the cut.
	out = [][]uint32{0: nil, 1: nil, 2: nil}
	g := testGraph(out, []uint32{0, 1, 2})
	for i := range g.roots {
		g.roots[i].ref = 7 // one frame holds them all
	}
	cuts = pickOn(t, g, []uint32{0, 1, 2}, nil)
	if len(cuts) != 1 || cuts[0].pos != none || cuts[0].samples != 3 {
		t.Errorf("records held by one frame's words: want the frame, got %+v", cuts)
	}
}

type testCut struct {
	pos     uint32 // none for a root group
	samples int
}

func runPick(t *testing.T, out [][]uint32, roots, samples []uint32, internals map[uint32]bool) []testCut {
	return pickOn(t, testGraph(out, roots), samples, internals)
}

func pickOn(t *testing.T, g *graph, samples []uint32, internals map[uint32]bool) []testCut {
	t.Helper()
	a := &aggregator{g: g}
	var err error
	if a.lead, err = g.leadsTo(samples); err != nil {
		t.Fatal(err)
	}
	s, err := a.buildSubgraph()
	if err != nil {
		t.Fatal(err)
	}
	defer s.free()
	d, err := dominators(s)
	if err != nil {
		t.Fatal(err)
	}
	defer d.free()
	start, kids, err := d.children()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, s.vertices())
	count := make([]int32, s.vertices())
	for _, p := range samples {
		w[s.vertexOf(p)]++
		count[s.vertexOf(p)]++
	}
	for i := len(d.order) - 1; i > 0; i-- {
		v := d.order[i]
		w[d.idom[v]] += w[v]
		count[d.idom[v]] += count[v]
	}
	internal := func(v uint32) bool { return v >= s.firstObj() && internals[s.objs[v-s.firstObj()]] }
	var out []testCut
	for _, c := range pickCuts(d, start, kids, w, count, 3, internal) {
		tc := testCut{pos: none, samples: c.samples}
		if c.v >= s.firstObj() {
			tc.pos = s.objs[c.v-s.firstObj()]
		}
		out = append(out, tc)
	}
	return out
}
