package walk

import (
	"fmt"
	"strings"

	"github.com/memdoctor/memdoctor/holders"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
	"github.com/memdoctor/memdoctor/process"
)

// namer names the roots and the steps of paths, from DWARF types and the target's memory.
type namer struct {
	h       *heap
	g       *graph
	ix      *process.Index
	tab     *process.Pclntab
	t       *process.Target
	st      *stackRoots
	types   uint64 // moduledata.types: runtime types are offsets from it
	direct  uint64 // abi.TFlagDirectIface
	dgs     map[int64]*proc.G
	locals  map[int][]*proc.Variable
	rtCache map[uint64]godwarf.Type
	memo    map[uint32]*named
	named   map[string]godwarf.Type // types found by name
}

// path names the chain of objects from the root ri down to the last one.
func (n *namer) path(p uint32) (holders.Root, []holders.Hop, rootSpan) {
	// Name the chain from the nearest ancestor already named: paths share their beginnings.
	var chain []uint32
	q := p
	for {
		if _, ok := n.memo[q]; ok {
			break
		}
		chain = append(chain, q)
		par := n.g.parent[q]
		if par&rootBit != 0 {
			break
		}
		q = par
	}
	for k := len(chain) - 1; k >= 0; k-- {
		n.memo[chain[k]] = n.step(chain[k])
	}
	m := n.memo[p]
	return m.root, m.hops, m.span
}

// named is what naming found for one object: its root and the steps from it.
type named struct {
	root holders.Root
	span rootSpan
	hops []holders.Hop
	v    view
}

// step names the object at position p from its parent, already named (or from its root).
func (n *namer) step(p uint32) *named {
	base, sp := n.g.obj(p)
	par := n.g.parent[p]
	var m named
	var l leaf
	var cur view
	var slot uint64
	if par&rootBit != 0 {
		r := n.g.roots[par&^rootBit]
		m.root, l, cur = n.root(r)
		m.span = n.rootSpan(r, m.root)
		slot = r.addr
	} else {
		pm := n.memo[par]
		m.root, m.span, m.hops = pm.root, pm.span, pm.hops
		pbase, _ := n.g.obj(par)
		slot = pbase + uint64(n.g.parentOff[p])
		cur = pm.v
		l = locate(cur, int64(n.g.parentOff[p]), n.ix)
	}
	var ptr uint64
	if slot != 0 {
		ptr, _ = n.h.cache.Word(slot)
	}
	next, extra := n.child(l, cur, slot, ptr, base, sp)
	m.v = next
	expr := l.expr + extra
	switch cur.inMap {
	case mapHeader, mapDir, mapTable, trieIndirect:
		return &m // a map's internals: the step shows as [key] or [value] at its slots
	case mapGroups:
		if i := strings.LastIndex(expr, "[value]"); i >= 0 {
			expr = expr[i:]
		} else if i := strings.LastIndex(expr, "[key]"); i >= 0 {
			expr = expr[i:]
		}
	case trieEntry:
		switch {
		case strings.HasPrefix(expr, ".key"):
			expr = "[key]" + strings.TrimPrefix(expr, ".key")
		case strings.HasPrefix(expr, ".value"):
			expr = "[value]" + strings.TrimPrefix(expr, ".value")
		default:
			return &m // the next entry of a collision list
		}
	}
	switch next.inMap {
	case notMap, mapHeader:
	case trieIndirect:
		// Into a sync.Map: one step that names it; its nodes are internals.
		for _, inner := range []string{".m.root.v", ".root.v"} {
			expr = strings.TrimSuffix(expr, inner)
		}
		if expr == "" && len(m.hops) > 0 {
			return &m
		}
		m.hops = append(m.hops[:len(m.hops):len(m.hops)], holders.Hop{Expr: expr, Type: "sync.Map"})
		return &m
	default:
		return &m
	}
	h := holders.Hop{Expr: expr, Type: viewName(next, sp)}
	if k := len(m.hops) - 1; k >= 0 && (m.hops[k] == h || m.hops[k] == holders.Hop{Expr: h.Expr + "…", Type: h.Type}) {
		// The same step again (a linked list's next): one step, marked with an ellipsis.
		last := h
		last.Expr += "…"
		m.hops = append(m.hops[:k:k], last)
		return &m
	}
	m.hops = append(m.hops[:len(m.hops):len(m.hops)], h)
	return &m
}

// rootSpan is the extent of a named root: every root word in it belongs to the same variable.
type rootSpan struct {
	kind   rootKind
	ref    int32
	lo, hi uint64
}

func (s rootSpan) holds(r root) bool {
	if r.kind != s.kind {
		return false
	}
	switch r.kind {
	case rootGlobal:
		return r.addr >= s.lo && r.addr < s.hi
	case rootStack:
		return r.ref == s.ref && r.addr >= s.lo && r.addr < s.hi
	case rootFinalizer:
		return r.ref == s.ref
	}
	return true
}

func (n *namer) rootSpan(r root, root holders.Root) rootSpan {
	s := rootSpan{kind: r.kind, ref: r.ref, lo: r.addr, hi: r.addr + 8}
	switch r.kind {
	case rootGlobal:
		if g, ok := n.ix.GlobalAt(r.addr); ok {
			s.lo, s.hi = g.Addr, g.Addr+max(g.Size, 8)
		}
	case rootStack:
		if r.ref >= 0 && root.Var != "" {
			for _, v := range n.frameLocals(int(r.ref)) {
				if v.Flags&proc.VariableFakeAddress != 0 || v.DwarfType == nil {
					continue
				}
				size := uint64(max(sizeOf(v.DwarfType), 8))
				if r.addr >= v.Addr && r.addr < v.Addr+size {
					s.lo, s.hi = v.Addr, v.Addr+size
				}
			}
		}
	}
	return s
}

func viewName(v view, sp *span) string {
	switch {
	case v.mapType != nil:
		return typeName(v.mapType)
	case v.closure != "":
		return "closure " + v.closure
	case v.typ == nil:
		return fmt.Sprintf("%d-byte object", sp.elemSize)
	case v.array:
		return "[]" + typeName(v.typ)
	}
	return typeName(v.typ)
}

// root names a root and the word of it the path leaves from.
func (n *namer) root(r root) (holders.Root, leaf, view) {
	switch r.kind {
	case rootGlobal:
		if g, ok := n.ix.GlobalAt(r.addr); ok {
			l := locate(view{typ: g.Type}, int64(r.addr-g.Addr), n.ix)
			return holders.Root{Kind: "global", Name: g.Name, Type: typeName(g.Type)}, l, view{typ: g.Type}
		}
		return holders.Root{Kind: "global", Name: fmt.Sprintf("global at %#x", r.addr)}, leaf{}, view{}
	case rootStack:
		return n.stackRoot(r)
	case rootFinalizer:
		name := "finalizer"
		var v view
		if r.ref >= 0 {
			base, sp := n.h.objBase(uint32(r.ref))
			v = n.finalizedView(uint32(r.ref), base, sp)
			name = "finalizer of " + viewName(v, sp)
			if r.addr >= base && r.addr < base+sp.elemSize {
				return holders.Root{Kind: "finalizer", Name: name}, locate(v, int64(r.addr-base), n.ix), v
			}
			return holders.Root{Kind: "finalizer", Name: name}, leaf{expr: " function"}, view{}
		}
		return holders.Root{Kind: "finalizer", Name: name}, leaf{}, v
	case rootCleanup:
		return holders.Root{Kind: "cleanup", Name: "cleanup (runtime.AddCleanup)"}, leaf{}, view{}
	case rootWeak:
		return holders.Root{Kind: "weak", Name: "weak pointer handle"}, leaf{}, view{}
	case rootFinq:
		return holders.Root{Kind: "finalizer-queue", Name: "finalizers queued to run"}, leaf{}, view{}
	case rootRegister:
		return holders.Root{Kind: "register", Name: fmt.Sprintf("registers of thread %d", r.ref)}, leaf{}, view{}
	}
	return holders.Root{Kind: "unknown", Name: "?"}, leaf{}, view{}
}
