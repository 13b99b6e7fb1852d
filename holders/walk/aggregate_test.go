package walk

import (
	"slices"
	"testing"

	"github.com/memdoctor/memdoctor/holders"
)

// chainNamed names an object by a chain of steps from a root.
func chainNamed(root *rootNamed, exprs ...string) *named {
	var m *named
	for _, e := range exprs {
		m = &named{r: root, prev: m, hop: &holders.Hop{Expr: e, Type: "T"}}
	}
	return m
}

// TestAggregatePaths: paths that differ only in how often a step repeats (a list's next) are
// one path, shown with the repetition; paths from other roots or through other fields are not.
func TestAggregatePaths(t *testing.T) {
	g := testGraph(make([][]uint32, 4), nil)
	n := &namer{g: g, memo: map[uint32]*named{}}
	root := &rootNamed{root: holders.Root{Kind: "global", Name: "main.list"}}
	other := &rootNamed{root: holders.Root{Kind: "global", Name: "main.other"}}
	n.memo[0] = chainNamed(root, ".head", ".next", ".value")
	n.memo[1] = chainNamed(root, ".head", ".next…", ".value")
	n.memo[2] = chainNamed(root, ".head", ".next…", ".value")
	n.memo[3] = chainNamed(other, ".head", ".value")
	a := &aggregator{g: g, n: n, opts: Options{MaxPaths: 10, Coverage: 1}}
	cs := culpritSamples{site: "main.add"}
	for id := range uint32(4) {
		cs.samples = append(cs.samples, sample{id: id, size: 16})
		cs.sizes = append(cs.sizes, 16)
		cs.weights = append(cs.weights, 100)
	}
	c := a.culprit(cs)
	if len(c.Paths) != 2 || c.Paths[0].Expr != "main.list.head.next….value" || c.Paths[0].Samples != 3 || c.Paths[1].Expr != "main.other.head.value" {
		var got []string
		for _, p := range c.Paths {
			got = append(got, p.Expr)
		}
		t.Errorf("want main.list.head.next….value (3 samples) then main.other.head.value; got %q", got)
	}
}

func TestNamesOfCuts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"github.com/nats-io/nats-server/v2/server.Account", "server.Account"},
		{"main.registry", "main.registry"},
		{"github.com/memdoctor/memdoctor/lab.holderCache[string,[]uint8]", "lab.holderCache[string,[]uint8]"},
		{"example.com/a.T[example.com/b.U]", "a.T[example.com/b.U]"},
	} {
		if got := shortTypeName(c.in); got != c.want {
			t.Errorf("shortTypeName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for expr, want := range map[string]bool{".lqws": true, ".a.b_c": true, "": false, "[value]": false, ".s[i]": false, ".(*T)": false, ".x+8": false} {
		if isFieldChain(expr) != want {
			t.Errorf("isFieldChain(%q) = %v", expr, !want)
		}
	}
	for expr, want := range map[string]bool{"+16": true, ".a+8": true, ".a": false, "[i]": false} {
		if hasOffset(expr) != want {
			t.Errorf("hasOffset(%q) = %v", expr, !want)
		}
	}
}

// TestAggregateRecursiveSteps: paths through a tree that differ only in which child links
// they take are one path, shown with every link taken.
func TestAggregateRecursiveSteps(t *testing.T) {
	g := testGraph(make([][]uint32, 3), nil)
	n := &namer{g: g, memo: map[uint32]*named{}}
	root := &rootNamed{root: holders.Root{Kind: "global", Name: "main.zone"}}
	tree := func(links ...string) *named {
		m := chainNamed(root, ".Root")
		for _, l := range links {
			m = &named{r: root, prev: m, hop: &holders.Hop{Expr: l, Type: "tree.Node"}, rec: true}
		}
		return &named{r: root, prev: m, hop: &holders.Hop{Expr: ".Elem", Type: "tree.Elem"}}
	}
	n.memo[0] = tree(".Left")
	n.memo[1] = tree(".(Left|Right)…")
	n.memo[2] = tree(".Right…")
	a := &aggregator{g: g, n: n, opts: Options{MaxPaths: 10, Coverage: 1}}
	cs := culpritSamples{site: "main.parse"}
	for id := range uint32(3) {
		cs.samples = append(cs.samples, sample{id: id, size: 16})
		cs.sizes = append(cs.sizes, 16)
		cs.weights = append(cs.weights, 100)
	}
	c := a.culprit(cs)
	if len(c.Paths) != 1 || c.Paths[0].Expr != "main.zone.Root.(Left|Right)….Elem" || c.Paths[0].Samples != 3 {
		t.Errorf("want one path main.zone.Root.(Left|Right)….Elem; got %+v", c.Paths)
	}
	for _, c := range []struct {
		expr string
		want []string
	}{{".next", []string{"next"}}, {".next…", []string{"next"}}, {".(Left|Right)…", []string{"Left", "Right"}}, {".a.b", nil}, {"[i]", nil}, {".(*T)", nil}} {
		if got := fieldsOf(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("fieldsOf(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
