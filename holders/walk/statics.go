package walk

import (
	"fmt"
	"sort"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/memdoctor/memdoctor/process"
)

// A package-level composite literal taken by address (`var reg = &Registry{...}`, also behind an
// interface: `var r Registerer = &Registry{...}`) is laid out by the compiler in the data segment,
// as a static temporary that DWARF does not describe and the symbol table does not name. Its
// pointer words are roots like any package variable's. The statics index names them by the
// variable that points at them, typed by what that variable points to; what no variable points at
// is named by the symbol table when it has a symbol there (the linker's own statics), else by
// its address.

// static is one static temporary: where it is, what it holds, and the variable that points at it.
type static struct {
	addr, size uint64
	typ        godwarf.Type // what it holds
	owner      string       // the variable that points at it (a package variable, or a field of one)
	ownerType  string       // that variable's type
	assert     string       // ".(*T)" when the variable is an interface
}

// maxStaticDepth bounds how far statics that point at statics are followed.
const maxStaticDepth = 4

type staticIndex struct {
	statics []static         // sorted by addr
	syms    []process.Symbol // the symbol table's data symbols, sorted by address
}

// staticsOf builds the index once, when a root word outside every DWARF variable is named.
func (n *namer) staticsOf() *staticIndex {
	if n.statix != nil {
		return n.statix
	}
	ix := &staticIndex{}
	n.statix = ix
	ix.syms, _ = n.t.DataSymbols()
	inData := func(a uint64) bool {
		for _, s := range n.segments {
			if a >= s[0] && a < s[1] {
				return true
			}
		}
		return false
	}
	seen := map[uint64]bool{}
	var visit func(base uint64, t godwarf.Type, owner, ownerType string, depth int)
	add := func(ptr uint64, elem godwarf.Type, owner, ownerType, assert string, depth int) {
		elem = resolve(elem)
		size := sizeOf(elem)
		if ptr == 0 || size <= 0 || seen[ptr] || !inData(ptr) {
			return
		}
		if _, ok := n.ix.GlobalAt(ptr); ok {
			return // a variable DWARF describes (var a T; var p = &a)
		}
		seen[ptr] = true
		ix.statics = append(ix.statics, static{addr: ptr, size: uint64(size), typ: elem, owner: owner, ownerType: ownerType, assert: assert})
		if depth < maxStaticDepth {
			visit(ptr, elem, owner+assert, typeName(elem), depth+1)
		}
	}
	visit = func(base uint64, t godwarf.Type, owner, ownerType string, depth int) {
		n.pointerWords(t, 0, func(off int64, expr string, word godwarf.Type) {
			switch w := resolve(word).(type) {
			case *godwarf.PtrType:
				if p, err := n.h.cache.Word(base + uint64(off)); err == nil {
					add(p, w.Type, owner+expr, ownerTypeOf(expr, ownerType, word), "", depth)
				}
			case *godwarf.InterfaceType:
				tw, err1 := n.h.cache.Word(base + uint64(off))
				p, err2 := n.h.cache.Word(base + uint64(off) + 8)
				if err1 != nil || err2 != nil || tw == 0 {
					return
				}
				dyn := n.dynamicType(w, tw)
				if pt, ok := resolve(dyn).(*godwarf.PtrType); ok {
					add(p, pt.Type, owner+expr, ownerTypeOf(expr, ownerType, word), ".("+typeName(dyn)+")", depth)
				}
			}
		})
	}
	for _, g := range n.ix.Globals {
		if g.Type != nil && inData(g.Addr) {
			visit(g.Addr, g.Type, g.Name, typeName(g.Type), 0)
		}
	}
	sort.Slice(ix.statics, func(i, j int) bool { return ix.statics[i].addr < ix.statics[j].addr })
	return ix
}

func ownerTypeOf(expr, ownerType string, word godwarf.Type) string {
	if expr == "" {
		return ownerType
	}
	return typeName(word)
}

// pointerWords calls fn with each pointer or interface word of a value of type t (at offset
// base in it), and the expression that names it; arrays only up to a few elements.
func (n *namer) pointerWords(t godwarf.Type, base int64, fn func(off int64, expr string, word godwarf.Type)) {
	var walk func(t godwarf.Type, off int64, expr string, depth int)
	walk = func(t godwarf.Type, off int64, expr string, depth int) {
		if depth > 6 {
			return
		}
		switch x := resolve(t).(type) {
		case *godwarf.PtrType, *godwarf.InterfaceType:
			fn(off, expr, t)
		case *godwarf.StructType:
			if isMapGroup(x.StructName) {
				return
			}
			for _, f := range x.Field {
				walk(f.Type, off+f.ByteOffset, expr+"."+f.Name, depth+1)
			}
		case *godwarf.ArrayType:
			es := sizeOf(x.Type)
			if es <= 0 || x.Count > 16 {
				return
			}
			for i := int64(0); i < x.Count; i++ {
				walk(x.Type, off+i*es, fmt.Sprintf("%s[%d]", expr, i), depth+1)
			}
		}
	}
	walk(t, base, "", 0)
}

// dynamicType is the dynamic type of an interface of DWARF type t whose first word is tw.
func (n *namer) dynamicType(t *godwarf.InterfaceType, tw uint64) godwarf.Type {
	typAddr := tw
	if st, ok := resolve(t.TypedefType.Type).(*godwarf.StructType); ok && len(st.Field) > 0 && st.Field[0].Name == "tab" {
		// A non-empty interface: the word is an itab, whose Type follows its Inter.
		var err error
		if typAddr, err = n.h.cache.Word(tw + 8); err != nil {
			return nil
		}
	}
	return n.dwarfType(typAddr)
}

// staticAt finds the static that holds addr.
func (ix *staticIndex) staticAt(addr uint64) (static, bool) {
	i := sort.Search(len(ix.statics), func(i int) bool { return ix.statics[i].addr > addr })
	if i > 0 && addr < ix.statics[i-1].addr+ix.statics[i-1].size {
		return ix.statics[i-1], true
	}
	return static{}, false
}

// symbolAt finds the symbol table's data symbol that holds addr.
func (ix *staticIndex) symbolAt(addr uint64) (process.Symbol, bool) {
	i := sort.Search(len(ix.syms), func(i int) bool { return ix.syms[i].Addr > addr })
	if i > 0 && addr < ix.syms[i-1].Addr+ix.syms[i-1].Size {
		return ix.syms[i-1], true
	}
	return process.Symbol{}, false
}
