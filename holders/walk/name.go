package walk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memdoctor/memdoctor/culprit"
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
	roots   map[int]rootCache // the roots named so far, by index
	// segments are the data and bss segments of every module; statix names the statics in
	// them, once needed.
	segments [][2]uint64
	statix   *staticIndex
	named    map[string]godwarf.Type // types found by name
}

// path names the chain of objects from its root down to the object at position p, following
// each object's chosen parent.
func (n *namer) path(p uint32) *named {
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
		q := chain[k]
		n.memo[q] = n.step(q, n.g.parent[q], n.g.parentOff[q])
	}
	return n.memo[p]
}

// named is what naming found for one object: its root, the steps from it (a list shared with
// the objects named before it on the path) and what is known of its type; and how readable
// the path is (see cost).
type named struct {
	r    *rootNamed
	prev *named       // the object whose steps come before this one's own
	hop  *holders.Hop // this object's own step; nil when it adds none (a map's internals)
	v    view
	cost cost
	rec  bool // its step goes through a recursive structure (see step)
}

// rootNamed is a root as a path shows it.
type rootNamed struct {
	root holders.Root
	ri   int // its index in the graph's roots
}

// cost is how readable and how lasting a path is, compared in order: the root's tier (0: a
// variable named and typed; 1: a root without a name, or whose word types nothing; 2: a word
// scanned conservatively), whether the root holds only while something else lives (transient:
// see lasting), the steps through objects of unknown type or words named by offset, and the
// steps.
type cost struct {
	tier      uint8
	transient uint8
	untyped   uint16
	steps     uint32
}

func (c cost) less(d cost) bool {
	if c.tier != d.tier {
		return c.tier < d.tier
	}
	if c.transient != d.transient {
		return c.transient < d.transient
	}
	if c.untyped != d.untyped {
		return c.untyped < d.untyped
	}
	return c.steps < d.steps
}

// hops lists the steps from the root to the object.
func (m *named) hops() []holders.Hop {
	k := 0
	for q := m; q != nil; q = q.prev {
		if q.hop != nil {
			k++
		}
	}
	out := make([]holders.Hop, k)
	for q := m; q != nil; q = q.prev {
		if q.hop != nil {
			k--
			out[k] = *q.hop
		}
	}
	return out
}

// lastStep is the nearest object of the path, m or one before it, that has a step of its own.
func (m *named) lastStep() *named {
	for q := m; q != nil; q = q.prev {
		if q.hop != nil {
			return q
		}
	}
	return nil
}

// expr is the path as Go would reach the object: the root, then each step.
func (m *named) expr() string {
	var b strings.Builder
	b.WriteString(m.r.root.Label())
	for _, h := range m.hops() {
		b.WriteString(h.Expr)
	}
	return b.String()
}

// step names the object at position p reached from par (an object already named, or rootBit|
// a root's index) through the word at offset off of it.
func (n *namer) step(p, par, off uint32) *named {
	base, sp := n.g.obj(p)
	var m named
	var l leaf
	var cur view
	var slot uint64
	var pm *named
	if par&rootBit != 0 {
		rc := n.rootOf(int(par &^ rootBit))
		m.r, l, cur = rc.rn, rc.l, rc.v
		m.cost = cost{tier: rc.tier, transient: uint8(btoi(!lasting(rc.rn.root)))}
		slot = n.g.roots[par&^rootBit].addr
	} else {
		pm = n.memo[par]
		m.r, m.prev, m.cost = pm.r, pm, pm.cost
		pbase, _ := n.g.obj(par)
		slot = pbase + uint64(off)
		cur = pm.v
		l = locate(cur, int64(off), n.ix)
	}
	m.cost.steps++
	var ptr uint64
	if slot != 0 {
		ptr, _ = n.h.cache.Word(slot)
	}
	next, extra := n.child(l, cur, slot, ptr, base, sp)
	m.v = next
	expr := l.expr + extra
	if pm == nil && untypedView(next) {
		// A root that types nothing it reaches is no better than an unnamed one.
		m.cost.tier = max(m.cost.tier, 1)
	}
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
		if expr == "" && m.lastStep() != nil {
			return &m
		}
		m.hop = &holders.Hop{Expr: expr, Type: "sync.Map"}
		return &m
	default:
		return &m
	}
	if untypedView(next) || hasOffset(expr) {
		m.cost.untyped++
	}
	h := holders.Hop{Expr: expr, Type: viewName(next, sp)}
	q := m.lastStep()
	// A step from an object to another of its type through one of its fields (a list's next,
	// a tree's Left and Right) is a step through a recursive structure.
	m.rec = q != nil && q == pm && q.hop.Type == h.Type && h.Type != "" && fieldsOf(h.Expr) != nil
	switch {
	case q == nil:
	case *q.hop == h || *q.hop == holders.Hop{Expr: h.Expr + "…", Type: h.Type}:
		// The same step again (a linked list's next): one step, marked with an ellipsis.
		h.Expr += "…"
		m.prev = q.prev
	case m.rec && q.rec:
		// On through the recursive structure: one step, with the fields it takes.
		h.Expr = recursiveStep(append(fieldsOf(q.hop.Expr), fieldsOf(h.Expr)...))
		m.prev = q.prev
	}
	m.hop = &h
	return &m
}

// aggregateKey is what paths that are one path share: their steps, where a step through a
// recursive structure (a list's .next…, a tree's .(Left|Right)…) counts once whatever its
// fields and however often it repeats, and a repeated step once (.x[i] and .x[i]… are one).
func (m *named) aggregateKey() string {
	var parts []string
	for q := m; q != nil; q = q.prev {
		switch {
		case q.hop == nil:
		case q.rec:
			parts = append(parts, ".…{"+q.hop.Type+"}")
		default:
			parts = append(parts, strings.TrimSuffix(q.hop.Expr, "…"))
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, "")
}

// fieldsOf is the fields of a step that selects one field (".next"), or of a step through a
// recursive structure (".next…", ".(Left|Right)…"); nil for any other step.
func fieldsOf(expr string) []string {
	e := strings.TrimSuffix(expr, "…")
	if strings.HasPrefix(e, ".(") && strings.HasSuffix(e, ")") && e != expr {
		fs := strings.Split(e[2:len(e)-1], "|")
		for _, f := range fs {
			if !isFieldChain("." + f) {
				return nil
			}
		}
		return fs
	}
	if isFieldChain(e) && strings.Count(e, ".") == 1 {
		return []string{e[1:]}
	}
	return nil
}

// recursiveStep is a step through a recursive structure by the given fields: ".next…",
// ".(Left|Right)…".
func recursiveStep(fields []string) string {
	slices.Sort(fields)
	fields = slices.Compact(fields)
	if len(fields) == 1 {
		return "." + fields[0] + "…"
	}
	return ".(" + strings.Join(fields, "|") + ")…"
}

// untypedView says whether nothing is known of an object's type.
func untypedView(v view) bool {
	return v.typ == nil && v.closure == "" && v.mapType == nil && v.inMap == notMap && v.chanElem == nil
}

// hasOffset says whether an expression names a word by its offset ("+24"), not by a field.
func hasOffset(expr string) bool {
	for i := 0; i+1 < len(expr); i++ {
		if expr[i] == '+' && expr[i+1] >= '0' && expr[i+1] <= '9' {
			return true
		}
	}
	return false
}

// rootOf names the root at index ri (once): the root as a path shows it, the word of it the
// path leaves from, what is known of what it holds, and its tier (see cost).
func (n *namer) rootOf(ri int) rootCache {
	if c, ok := n.roots[ri]; ok {
		return c
	}
	r := n.g.roots[ri]
	root, l, v := n.root(r)
	tier := uint8(0)
	switch {
	case r.conservative:
		tier = 2
	case !namedRoot(root):
		tier = 1
	}
	c := rootCache{rn: &rootNamed{root: root, ri: ri}, l: l, v: v, tier: tier}
	n.roots[ri] = c
	return c
}

type rootCache struct {
	rn   *rootNamed
	l    leaf
	v    view
	tier uint8
}

// lasting says whether a root holds what it reaches for as long as the program runs, whatever
// its goroutines do: a package variable (or the static one points at). A goroutine's frame
// holds only while its call lasts, a finalizer or cleanup only until it runs; and the
// runtime's own package variables (runtime.allgs, allp, sched) reach goroutines' state (the
// channel a goroutine waits on, through its sudog; a sleeping goroutine's timer) only while
// the goroutine is where it is.
func lasting(r holders.Root) bool {
	return r.Kind == "global" && !culprit.IsRuntime(r.Name)
}

// namedRoot says whether a root has a name a reader can find in the source.
func namedRoot(r holders.Root) bool {
	switch r.Kind {
	case "global":
		return !strings.HasPrefix(r.Name, "global at ")
	case "goroutine":
		return r.Var != "" && r.Var != "(temporary)" && r.Var != "(unnamed word)"
	case "finalizer":
		return true
	}
	return false
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
		ix := n.staticsOf()
		if st, ok := ix.staticAt(r.addr); ok {
			// A static the compiler laid out for a composite literal: named by the variable
			// that points at it (as Go reads it: the pointer is implicitly dereferenced).
			l := locate(view{typ: st.typ}, int64(r.addr-st.addr), n.ix)
			l.expr = st.assert + l.expr
			return holders.Root{Kind: "global", Name: st.owner, Type: st.ownerType, Static: true}, l, view{typ: st.typ}
		}
		if sym, ok := ix.symbolAt(r.addr); ok {
			l := leaf{}
			if off := r.addr - sym.Addr; off > 0 {
				l.expr = fmt.Sprintf("+%d", off)
			}
			return holders.Root{Kind: "global", Name: sym.Name}, l, view{}
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
