package walk

import (
	"math/rand/v2"
	"testing"
)

// TestLeadsTo: on random graphs, the objects that lead to a target are those from which a
// target is reached, whether the sweeps find them or the reverse edges do; a chain that points
// back up, which would take a sweep per object, is handed to the reverse edges.
func TestLeadsTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	check := func(name string, out [][]uint32, targets []uint32, lead bitset) {
		t.Helper()
		for p := range out {
			want := false
			for _, tg := range targets {
				if reachable(out, []uint32{uint32(p)}, none, nil)[tg] {
					want = true
					break
				}
			}
			if lead.has(uint32(p)) != want {
				t.Fatalf("%s: object %d leads to %v: %v, want %v (edges %v)", name, p, targets, lead.has(uint32(p)), want, out)
			}
		}
	}
	for trial := range 300 {
		n := 1 + rng.IntN(60)
		out, roots := randomGraph(rng, n, float64(trial%3))
		g := testGraph(out, roots)
		var targets []uint32
		for range 1 + rng.IntN(3) {
			targets = append(targets, uint32(rng.IntN(n)))
		}
		lead, err := g.leadsTo(targets)
		if err != nil {
			t.Fatal(err)
		}
		check("sweeps", out, targets, lead)
		rev, err := g.leadsToByReverse(targets)
		if err != nil {
			t.Fatal(err)
		}
		check("reverse", out, targets, rev)
	}
	// A chain whose every edge points back to the object found before it.
	n := 100
	out := make([][]uint32, n)
	for p := 1; p < n; p++ {
		out[p] = []uint32{uint32(p - 1)}
	}
	g := testGraph(out, []uint32{uint32(n - 1)})
	lead, err := g.leadsTo([]uint32{0})
	if err != nil {
		t.Fatal(err)
	}
	if c := lead.count(); c != n {
		t.Fatalf("a chain of %d back to the target: %d lead to it", n, c)
	}
}
