package walk

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/memdoctor/memdoctor/process"
)

func common(name string, size int64) godwarf.CommonType {
	return godwarf.CommonType{Name: name, ByteSize: size}
}

func intT() godwarf.Type {
	return &godwarf.IntType{BasicType: godwarf.BasicType{CommonType: common("int", 8)}}
}

func ptrTo(t godwarf.Type) godwarf.Type {
	return &godwarf.PtrType{CommonType: common("*"+t.String(), 8), Type: t}
}

func structT(name string, fields ...*godwarf.StructField) *godwarf.StructType {
	var size int64
	for _, f := range fields {
		size = max(size, f.ByteOffset+f.Type.Size())
	}
	return &godwarf.StructType{CommonType: common(name, size), StructName: name, Kind: "struct", Field: fields}
}

func field(name string, off int64, t godwarf.Type) *godwarf.StructField {
	return &godwarf.StructField{Name: name, ByteOffset: off, Type: t}
}

type closures map[string][]process.ClosureVar

func (c closures) Closure(fn string) []process.ClosureVar { return c[fn] }

// TestLocate: a word of an object is named by the expression that reaches it from the
// object's start, as Go would write it; a map group's slots read as [key] and [value].
func TestLocate(t *testing.T) {
	node := structT("main.node", field("id", 0, intT()))
	session := structT("main.session",
		field("id", 0, intT()),
		field("owner", 8, ptrTo(node)),
		field("pair", 16, &godwarf.ArrayType{CommonType: common("[2]*main.node", 16), Type: ptrTo(node), Count: 2}),
		field("inner", 32, structT("main.inner", field("a", 0, intT()), field("next", 8, ptrTo(node)))),
	)
	slot := structT("noalg.struct { key int; elem *main.node }", field("key", 0, intT()), field("elem", 8, ptrTo(node)))
	group := structT("noalg.map.group[int]*main.node",
		field("ctrl", 0, intT()),
		field("slots", 8, &godwarf.ArrayType{CommonType: common("[8]slot", 128), Type: slot, Count: 8}))
	ix := closures{"main.run.func1": {{Name: "&history", Offset: 8, Type: ptrTo(node)}, {Name: "limit", Offset: 16, Type: intT()}}}
	cases := []struct {
		v    view
		off  int64
		want string
	}{
		{view{typ: session}, 8, ".owner"},
		{view{typ: session}, 24, ".pair[i]"},
		{view{typ: session}, 40, ".inner.next"},
		{view{typ: session, array: true}, 48 + 8, "[i].owner"},
		{view{typ: session}, 64, "+64"},
		{view{typ: session, off: 8}, 16, ".owner"},
		{view{}, 16, "+16"},
		{view{typ: group}, 8 + 16*3 + 8, "[value]"},
		{view{typ: group, array: true}, 136 + 8 + 8, "[i][value]"},
		{view{closure: "main.run.func1"}, 8, "{main.run.func1}.history"},
		{view{closure: "main.run.func1"}, 40, "{main.run.func1}+40"},
	}
	for _, c := range cases {
		if got := locate(c.v, c.off, ix).expr; got != c.want {
			t.Errorf("locate(%v at %d) = %q, want %q", typeName(c.v.typ), c.off, got, c.want)
		}
	}
}

// TestLevelSort: a level's objects end in slot-id order, each array permuted alike, and the
// positions point back at them.
func TestLevelSort(t *testing.T) {
	for _, n := range []int{0, 1, 5, 300, 70000} {
		g := &graph{}
		ids := rand.Perm(n * 3)[:n]
		g.pos = make([]uint32, n*3+1)
		g.order, g.parent, g.parentOff = make([]uint32, n), make([]uint32, n), make([]uint32, n)
		for i, id := range ids {
			g.add(uint32(id), uint32(id)*7, uint32(id)*3)
			_ = i
		}
		var l levelSort
		l.sort(g, 0, uint32(n))
		if !slices.IsSorted(g.order[:n]) {
			t.Fatalf("n=%d: not sorted", n)
		}
		for q, id := range g.order[:n] {
			if g.parent[q] != id*7 || g.parentOff[q] != id*3 || g.pos[id] != uint32(q)+1 {
				t.Fatalf("n=%d: position %d: id %d with parent %d, offset %d, pos %d", n, q, id, g.parent[q], g.parentOff[q], g.pos[id])
			}
		}
	}
}
