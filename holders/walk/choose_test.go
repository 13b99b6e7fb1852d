package walk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/holders"
)

// searchGraph is a graph to choose paths in: objects with edges, the objects of unknown type
// (a step into one is untyped), and roots with their tier and whether they are transient.
type searchGraph struct {
	out     [][]uint32
	untyped map[uint32]bool
	roots   []searchRoot
}

type searchRoot struct {
	name   string
	target uint32
	tier   uint8 // 0 named and typed, 1 unnamed, 2 conservative
	frame  bool  // a goroutine's frame (transient), not a package variable
}

// choose runs the search to the targets and returns, per target, the chosen path as
// "root.e<child>..." and its cost.
func (sg searchGraph) choose(t *testing.T, targets []uint32, maxNamed int) (map[uint32]string, map[uint32]cost, int) {
	t.Helper()
	n := uint32(len(sg.out))
	g := testGraph(sg.out, nil)
	lead, err := g.leadsTo(targets)
	if err != nil {
		t.Fatal(err)
	}
	chosen := map[uint32]*named{}
	s := search{
		objects: n, lead: lead, targets: targets,
		roots: func(fn func(ri, target uint32, conservative bool)) {
			for i, r := range sg.roots {
				fn(uint32(i), r.target, r.tier == 2)
			}
		},
		out: func(p uint32, fn func(child, off uint32)) {
			for i, c := range sg.out[p] {
				fn(c, uint32(8*i))
			}
		},
		name: func(p, par, off uint32) *named {
			m := &named{}
			if par&rootBit != 0 {
				r := sg.roots[par&^rootBit]
				m.r = &rootNamed{root: holders.Root{Kind: "global", Name: r.name}}
				m.cost.tier, m.cost.transient = r.tier, uint8(btoi(r.frame))
			} else {
				pm := chosen[par]
				m.r, m.prev, m.cost = pm.r, pm, pm.cost
			}
			m.cost.steps++
			if sg.untyped[p] {
				m.cost.untyped++
			}
			m.hop = &holders.Hop{Expr: fmt.Sprintf(".e%d", p)}
			return m
		},
		chosen: func(p, par, off uint32, m *named) { chosen[p] = m },
	}
	left, _ := s.run(maxNamed)
	paths, costs := map[uint32]string{}, map[uint32]cost{}
	for _, tg := range targets {
		if m := chosen[tg]; m != nil {
			paths[tg], costs[tg] = m.expr(), m.cost
		}
	}
	return paths, costs, left
}

// TestChoosePaths: a path from a named, typed root comes before a shorter one from an unnamed
// root or a conservatively scanned word; a package variable's before a goroutine frame's;
// typed steps before fewer steps; among equals, the
// walk's own order (the first root, the first parent); the search stops at its bound.
func TestChoosePaths(t *testing.T) {
	// 0 the target; 1 held by an unnamed static; 2-4 a longer chain from a named variable; 5 an
	// untyped object on a short way from the named variable, 6-7 a typed detour.
	sg := searchGraph{
		out: [][]uint32{0: nil, 1: {0}, 2: {3}, 3: {4}, 4: {0}, 5: {0}, 6: {7}, 7: {0}},
		roots: []searchRoot{
			{name: "static", target: 1, tier: 1},
			{name: "reg", target: 2},
			{name: "regs", target: 5},
			{name: "regs2", target: 6},
			{name: "register", target: 0, tier: 2},
		},
		untyped: map[uint32]bool{5: true},
	}
	paths, _, _ := sg.choose(t, []uint32{0}, 100)
	// reg.e2.e3.e4.e0 (4 typed steps) against regs2.e6.e7.e0 (3 typed steps): the shorter.
	if paths[0] != "regs2.e6.e7.e0" {
		t.Errorf("want the shortest path of typed steps from a named root, regs2.e6.e7.e0; got %s", paths[0])
	}
	// Without the detour, the untyped step loses to the longer typed chain.
	sg.roots = sg.roots[:3]
	sg.roots = append(sg.roots, searchRoot{name: "register", target: 0, tier: 2})
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "reg.e2.e3.e4.e0" {
		t.Errorf("want the typed chain reg.e2.e3.e4.e0; got %s", paths[0])
	}
	// Only the unnamed static and the register: the static (precise) first.
	sg.roots = []searchRoot{{name: "register", target: 0, tier: 2}, {name: "static", target: 1, tier: 1}}
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "static.e1.e0" {
		t.Errorf("want static.e1.e0 before a register; got %s", paths[0])
	}
	// A package variable's typed chain before a goroutine's frame's shorter one, and before an
	// untyped detour from a frame; but a frame's variable before an unnamed word of the data
	// segment (readable first, then lasting).
	sg = searchGraph{
		out:     [][]uint32{0: nil, 1: {2}, 2: {3}, 3: {4}, 4: {0}, 5: {0}, 6: {0}},
		roots:   []searchRoot{{name: "with.v", target: 5, frame: true}, {name: "reg", target: 1}, {name: "static", target: 6, tier: 1}},
		untyped: map[uint32]bool{},
	}
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "reg.e1.e2.e3.e4.e0" {
		t.Errorf("want the package variable's chain reg.e1.e2.e3.e4.e0 before the frame's with.v.e5.e0; got %s", paths[0])
	}
	sg.untyped[3] = true
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "reg.e1.e2.e3.e4.e0" {
		t.Errorf("want the package variable's chain through an untyped step before the frame's typed one; got %s", paths[0])
	}
	sg.roots = sg.roots[:1]
	sg.roots = append(sg.roots, searchRoot{name: "static", target: 6, tier: 1})
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "with.v.e5.e0" {
		t.Errorf("want a frame's variable before an unnamed word of the data segment; got %s", paths[0])
	}
	// Equal costs: the parent the walk found first (the lower position), whichever root.
	sg = searchGraph{out: [][]uint32{0: nil, 1: {0}, 2: {0}}, roots: []searchRoot{{name: "b", target: 2}, {name: "a", target: 1}}}
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "a.e1.e0" {
		t.Errorf("equal costs: want the walk's first parent, a.e1.e0; got %s", paths[0])
	}
	// Two roots at one object: the first.
	sg = searchGraph{out: [][]uint32{0: nil}, roots: []searchRoot{{name: "b", target: 0}, {name: "a", target: 0}}}
	if paths, _, _ := sg.choose(t, []uint32{0}, 100); paths[0] != "b.e0" {
		t.Errorf("two roots at one object: want the first, b.e0; got %s", paths[0])
	}
	// The bound: a long chain stops early and says how many targets are left.
	chain := make([][]uint32, 50)
	for i := 1; i < 50; i++ {
		chain[i] = []uint32{uint32(i - 1)}
	}
	sg = searchGraph{out: chain, roots: []searchRoot{{name: "head", target: 49}}}
	if _, _, left := sg.choose(t, []uint32{0}, 10); left != 1 {
		t.Errorf("a 50-object chain named 10 at most: want 1 target left, got %d", left)
	}
	// The queue's bound: records of many pointers each, all leading to the targets, would
	// queue a way per pointer; past queuePerNamed ways per object it may name, it stops
	// (here before it names any of the head's children, where the bound on objects named
	// alone would name one).
	const fan = 3 * queuePerNamed
	wide := make([][]uint32, fan+1)
	var kids []uint32
	for i := 1; i <= fan; i++ {
		kids = append(kids, uint32(i))
	}
	wide[0] = kids
	sg = searchGraph{out: wide, roots: []searchRoot{{name: "head", target: 0}}}
	if _, _, left := sg.choose(t, kids, 2); left != fan {
		t.Errorf("%d ways queued for 2 objects named at most: want the search stopped with all %d targets left, got %d", fan, fan, left)
	}
	if paths, _, left := sg.choose(t, kids, 100); left != 0 || paths[fan] != fmt.Sprintf("head.e0.e%d", fan) {
		t.Errorf("with room to name them all: want head.e0.e%d and no target left, got %q and %d left", fan, paths[fan], left)
	}
}

// TestChoosePathsAgainstBruteForce: on random graphs, each target's chosen path costs the least
// any path from a root costs (Bellman-Ford over the lexicographic costs), and is a path of the
// graph from a root.
func TestChoosePathsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 5))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		out, _ := randomGraph(rng, n, 1+float64(trial%3))
		sg := searchGraph{out: out, untyped: map[uint32]bool{}}
		for p := range n {
			if rng.IntN(4) == 0 {
				sg.untyped[uint32(p)] = true
			}
		}
		for i := range 1 + rng.IntN(5) {
			sg.roots = append(sg.roots, searchRoot{name: fmt.Sprintf("r%d", i), target: uint32(rng.IntN(n)), tier: uint8(rng.IntN(3)), frame: rng.IntN(2) == 0})
		}
		// The best cost of every object, by relaxing every edge until nothing changes.
		best := make([]*cost, n)
		for _, r := range sg.roots {
			c := cost{tier: r.tier, transient: uint8(btoi(r.frame)), steps: 1}
			if sg.untyped[r.target] {
				c.untyped = 1
			}
			if best[r.target] == nil || c.less(*best[r.target]) {
				best[r.target] = &c
			}
		}
		for changed := true; changed; {
			changed = false
			for p := range n {
				if best[p] == nil {
					continue
				}
				for _, c := range out[p] {
					next := *best[p]
					next.steps++
					if sg.untyped[c] {
						next.untyped++
					}
					if best[c] == nil || next.less(*best[c]) {
						best[c] = &next
						changed = true
					}
				}
			}
		}
		var targets []uint32
		for p := range n {
			if best[p] != nil && rng.IntN(3) == 0 {
				targets = append(targets, uint32(p))
			}
		}
		paths, costs, _ := sg.choose(t, targets, 1<<20)
		for _, tg := range targets {
			if costs[tg] != *best[tg] {
				t.Fatalf("trial %d: target %d chosen at %+v (%s), the best costs %+v (edges %v, roots %+v, untyped %v)",
					trial, tg, costs[tg], paths[tg], *best[tg], out, sg.roots, sg.untyped)
			}
			// The path is the graph's: a root's target, then edges.
			parts := strings.Split(paths[tg], ".e")
			var prev uint32 = none
			for i, part := range parts[1:] {
				var p uint32
				fmt.Sscan(part, &p)
				if i == 0 {
					ok := false
					for _, r := range sg.roots {
						if r.name == parts[0] && r.target == p {
							ok = true
						}
					}
					if !ok {
						t.Fatalf("trial %d: %s does not start at its root's object", trial, paths[tg])
					}
				} else if !contains(out[prev], p) {
					t.Fatalf("trial %d: %s steps from %d to %d, not an edge", trial, paths[tg], prev, p)
				}
				prev = p
			}
		}
	}
}

func contains(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
