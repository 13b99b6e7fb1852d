package walk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPickCutsAgainstBruteForce: on random graphs with random sampled objects, each cut holds
// alone (its removal leaves unreached) the samples it says; the first lies under the heaviest
// holder, holds at least keepShare of what it holds, and nothing it holds alone holds as much:
// it is the deepest. A sampled object that holds no other is never a cut.
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
		// A holder is an object or a root group; removing it leaves some objects unreached.
		type holder struct {
			obj  uint32 // none for a group
			drop map[int]bool
		}
		holderOf := func(v uint32) holder {
			if v >= s.firstObj() {
				return holder{obj: s.objs[v-s.firstObj()]}
			}
			drop := map[int]bool{}
			for _, ri := range s.groups[v-1] {
				drop[int(ri)] = true
			}
			return holder{obj: none, drop: drop}
		}
		unreached := func(h holder) []bool {
			r := reachable(out, roots, h.obj, h.drop)
			for p := range r {
				r[p] = reach[p] && !r[p]
			}
			return r
		}
		held := func(h holder) int {
			u := unreached(h)
			k := 0
			for _, p := range samples {
				if u[p] {
					k++
				}
			}
			return k
		} // The holders that may be cut: those that hold a sampled object besides themselves.
		var all []holder
		for v := uint32(1); v < uint32(s.vertices()); v++ {
			h := holderOf(v)
			own := 0
			if h.obj != none && slices.Contains(samples, h.obj) {
				own = 1
			}
			if held(h) > own {
				all = append(all, h)
			}
		}

		isSample := map[uint32]bool{}
		for _, p := range samples {
			isSample[p] = true
		}
		sampled := func(v uint32) bool { return v >= s.firstObj() && isSample[s.objs[v-s.firstObj()]] }
		got := pickCuts(d, start, kids, w, count, 3, sampled, func(uint32) bool { return false })
		for i, c := range got {
			k := held(holderOf(c.v))
			// A later cut counts what the earlier ones left; alone it may hold more.
			if (i == 0 && k != c.samples) || k < c.samples {
				t.Fatalf("trial %d: cut %d (vertex %d) says it holds %d samples; cutting it leaves %d unreached (edges %v, roots %v, samples %v)",
					trial, i, c.v, c.samples, k, out, roots, samples)
			}
		}
		if len(got) == 0 {
			continue
		}
		picks++
		cut := holderOf(got[0].v)
		under := unreached(cut) // what the cut holds alone
		isCut := func(h holder) bool {
			return h.obj == cut.obj && (h.obj != none || len(h.drop) == len(cut.drop) && held(h) == held(cut))
		}
		most, top := 0, 0
		for _, h := range all {
			k := held(h)
			most = max(most, k)
			// h is on the way to the cut when the cut is unreached without it.
			if cut.obj != none && !isCut(h) && unreached(h)[cut.obj] {
				top = max(top, k)
			}
		}
		top = max(top, got[0].samples)
		if top != most || float64(got[0].samples) < keepShare*float64(top) {
			t.Fatalf("trial %d: the first cut holds %d samples, the heaviest holder above it %d, the heaviest of all %d (edges %v, roots %v, samples %v)",
				trial, got[0].samples, top, most, out, roots, samples)
		}
		for _, h := range all {
			if h.obj == none || isCut(h) || !under[h.obj] {
				continue
			}
			if float64(held(h)) >= keepShare*float64(top) {
				t.Fatalf("trial %d: object %d, held by the cut %d, holds %d of the %d its heaviest holder holds: the cut is not the deepest (edges %v, roots %v, samples %v)",
					trial, h.obj, cut.obj, held(h), top, out, roots, samples)
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
	isSample := map[uint32]bool{}
	for _, p := range samples {
		isSample[p] = true
	}
	sampled := func(v uint32) bool { return v >= s.firstObj() && isSample[s.objs[v-s.firstObj()]] }
	var out []testCut
	for _, c := range pickCuts(d, start, kids, w, count, 3, sampled, internal) {
		tc := testCut{pos: none, samples: c.samples}
		if c.v >= s.firstObj() {
			tc.pos = s.objs[c.v-s.firstObj()]
		}
		out = append(out, tc)
	}
	return out
}

// TestCutsBudget: the cuts of a heap whose every object leads to a sample (a linked structure
// of pointers) are not worked out past a fifth of the heap read, so that memdoctor's own memory
// stays within what it promises; a leak held by a map among many other objects is.
func TestCutsBudget(t *testing.T) {
	for _, c := range []struct {
		name      string
		lead      int
		heapBytes uint64
		ok        bool
	}{
		{"a map's entries in a 1 GiB heap", 200_000, 1 << 30, true},
		{"a 1 GiB heap of 10M linked objects", 10_000_000, 1 << 30, false},
		{"2M objects of a 1 GiB heap", 2_000_000, 1 << 30, true},
		{"a small heap: the floor", 500_000, 8 << 20, true},
		{"a small heap past the floor", 1_000_000, 8 << 20, false},
	} {
		need, ok := cutsFit(c.lead, cutsBudget(c.heapBytes))
		if ok != c.ok {
			t.Errorf("%s: %d objects lead to samples, need %d MiB of a budget of %d MiB: fit %v, want %v",
				c.name, c.lead, need>>20, cutsBudget(c.heapBytes)>>20, ok, c.ok)
		}
	}
}
