package walk

import (
	"fmt"
	"github.com/memdoctor/memdoctor/holders"
	"reflect"
	"strings"

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

// child is what is known of the object a word points to, and what to add to the expression
// (an interface's dynamic type).
func (n *namer) child(l leaf, cur view, slot, ptr, base uint64, sp *span) (view, string) {
	off := int64(ptr - base)
	switch t := l.typ.(type) {
	case *godwarf.PtrType:
		elem := resolve(t.Type)
		switch {
		case isUntyped(elem):
			if cur.chanElem != nil && l.field == "buf" {
				return view{typ: cur.chanElem, off: off, array: true}, ""
			}
			if l.field == "v" && strings.HasPrefix(typeName(l.parent), "sync/atomic.Pointer[") {
				// atomic.Pointer[T] keeps an unsafe.Pointer; its type parameter says what to.
				name := strings.TrimSuffix(strings.TrimPrefix(typeName(l.parent), "sync/atomic.Pointer["), "]")
				if t := n.typeNamed(name); t != nil {
					return n.refine(view{typ: t, off: off}, base), ""
				}
			}
		case l.field == "dirPtr" && strings.HasPrefix(typeName(l.parent), "map<"):
			return n.mapDirectory(l, cur, slot, elem, off), ""
		case l.field == "data" && strings.HasPrefix(typeName(l.parent), "groupReference<"):
			return view{typ: elem, off: off, array: true, inMap: mapGroups}, ""
		case cur.inMap == mapDir:
			return view{typ: elem, off: off, inMap: mapTable}, ""
		default:
			return n.refine(view{typ: elem, off: off}, base), ""
		}
	case *godwarf.SliceType:
		if l.rel == 0 {
			return view{typ: t.ElemType, off: off, array: true}, ""
		}
	case *godwarf.StringType:
		return view{typ: &godwarf.UintType{BasicType: godwarf.BasicType{CommonType: godwarf.CommonType{ByteSize: 1, Name: "byte"}}}, off: off, array: true}, ""
	case *godwarf.MapType:
		return n.childOfValue(t, ptr, base, off), ""
	case *godwarf.ChanType:
		return n.childOfValue(t, ptr, base, off), ""
	case *godwarf.FuncType:
		if v := n.childOfValue(t, ptr, base, off); v.closure != "" {
			v.ownClosure = l.own
			return v, ""
		}
	case *godwarf.InterfaceType:
		if l.rel == 8 {
			return n.dynamic(t, slot, ptr, base, off)
		}
	}
	return n.headerView(base, sp), ""
}

func isUntyped(t godwarf.Type) bool {
	switch x := t.(type) {
	case nil, *godwarf.VoidType:
		return true
	case *godwarf.UnspecifiedType:
		return true
	case *godwarf.BasicType:
		return x.Name == "unsafe.Pointer"
	}
	return sizeOf(t) == 0 || t.String() == "unsafe.Pointer"
}

// mapDirectory is the object a map's dirPtr points to: its single group when the map is small
// (dirLen 0), else its directory of tables.
func (n *namer) mapDirectory(l leaf, cur view, slot uint64, tablePtr godwarf.Type, off int64) view {
	hdr, ok := l.parent.(*godwarf.StructType)
	if !ok {
		return view{}
	}
	var dirLenOff int64 = -1
	for _, f := range hdr.Field {
		if f.Name == "dirLen" {
			dirLenOff = f.ByteOffset
		}
	}
	dirPtrOff := int64(0)
	for _, f := range hdr.Field {
		if f.Name == "dirPtr" {
			dirPtrOff = f.ByteOffset
		}
	}
	dirLen, err := n.h.cache.Word(slot - uint64(dirPtrOff) + uint64(dirLenOff))
	if dirLenOff < 0 || err != nil {
		return view{}
	}
	if dirLen != 0 {
		return view{typ: tablePtr, off: off, array: true, inMap: mapDir} // []*table
	}
	// A small map: dirPtr points at one group, of the type the tables' groups have.
	if pt, ok := resolve(tablePtr).(*godwarf.PtrType); ok {
		if tbl, ok := resolve(pt.Type).(*godwarf.StructType); ok {
			for _, f := range tbl.Field {
				if f.Name != "groups" {
					continue
				}
				if gr, ok := resolve(f.Type).(*godwarf.StructType); ok {
					for _, d := range gr.Field {
						if d.Name == "data" {
							if gp, ok := resolve(d.Type).(*godwarf.PtrType); ok {
								return view{typ: resolve(gp.Type), off: off, inMap: mapGroups}
							}
						}
					}
				}
			}
		}
	}
	return view{}
}

// dynamic is the object an interface's data word points to, typed by the interface's dynamic
// type, and the type assertion that names the step.
func (n *namer) dynamic(t *godwarf.InterfaceType, slot, ptr, base uint64, off int64) (view, string) {
	tw, err := n.h.cache.Word(slot - 8)
	if err != nil || tw == 0 {
		return view{}, ""
	}
	typAddr := tw
	if st, ok := resolve(t.TypedefType.Type).(*godwarf.StructType); ok && len(st.Field) > 0 && st.Field[0].Name == "tab" {
		// A non-empty interface: the word is an itab, whose Type follows its Inter.
		if typAddr, err = n.h.cache.Word(tw + 8); err != nil {
			return view{}, ""
		}
	}
	dt := n.dwarfType(typAddr)
	if dt == nil {
		return view{}, ""
	}
	assert := ".(" + typeName(dt) + ")"
	tflag := uint64(0)
	if v, err := n.h.r.abiType.Read(n.h.cache, typAddr); err == nil {
		tflag = v.Uint("TFlag")
	}
	if tflag&n.direct != 0 {
		// Stored directly: the word is the pointer-shaped value itself.
		return n.childOfValue(dt, ptr, base, off), assert
	}
	return n.refine(view{typ: resolve(dt), off: off}, base), assert
}

// refine sees through what the runtime allocates under another type's name: a *time.Timer or
// *time.Ticker is a runtime timeTimer (its callback and argument follow the public fields),
// and a sync.Map's node is either an inner node or an entry, as its first byte says.
func (n *namer) refine(v view, base uint64) view {
	name := typeName(v.typ)
	switch {
	case name == "time.Timer" || name == "time.Ticker":
		if t := n.typeNamed("runtime.timeTimer"); t != nil {
			v.typ = t
		}
	case strings.HasPrefix(name, "internal/sync.node["):
		w, err := n.h.cache.Word((base + uint64(v.off)) &^ 7)
		if err != nil {
			return v
		}
		kind := "internal/sync.indirect["
		if byte(w>>(8*((base+uint64(v.off))&7))) != 0 {
			kind = "internal/sync.entry["
		}
		if t := n.typeNamed(kind + strings.TrimPrefix(name, "internal/sync.node[")); t != nil {
			v.typ = t
			return n.refine(v, base)
		}
	case strings.HasPrefix(name, "internal/sync.indirect["):
		v.inMap = trieIndirect
	case strings.HasPrefix(name, "internal/sync.entry["):
		v.inMap = trieEntry
	}
	return v
}

// typeNamed finds a type of the executable by name, resolved; nil when it has none.
func (n *namer) typeNamed(name string) godwarf.Type {
	if t, ok := n.named[name]; ok {
		return t
	}
	t, err := n.t.Delve.BinInfo().FindType(name)
	if err != nil {
		t = nil
	} else {
		t = resolve(t)
	}
	n.named[name] = t
	return t
}

// childOfValue types what a pointer-shaped value of type t points to.
func (n *namer) childOfValue(t godwarf.Type, ptr, base uint64, off int64) view {
	switch x := resolve(t).(type) {
	case *godwarf.PtrType:
		return n.refine(view{typ: resolve(x.Type), off: off}, base)
	case *godwarf.MapType:
		if pt, ok := resolve(x.TypedefType.Type).(*godwarf.PtrType); ok {
			return view{typ: resolve(pt.Type), off: off, mapType: x, inMap: mapHeader}
		}
	case *godwarf.ChanType:
		if pt, ok := resolve(x.TypedefType.Type).(*godwarf.PtrType); ok {
			return view{typ: resolve(pt.Type), off: off, chanElem: x.ElemType}
		}
	case *godwarf.FuncType:
		if fn, err := n.h.cache.Word(base); err == nil {
			if name := n.tab.FuncName(fn); name != "" {
				return view{closure: name}
			}
		}
	}
	return view{}
}

// dwarfType finds the DWARF type of a runtime type descriptor.
func (n *namer) dwarfType(typAddr uint64) godwarf.Type {
	if t, ok := n.rtCache[typAddr]; ok {
		return t
	}
	var t godwarf.Type
	if typAddr >= n.types {
		t, _ = n.ix.RuntimeType(typAddr - n.types)
	}
	n.rtCache[typAddr] = t
	return t
}

// finalizedView types an object with a finalizer from the pointer type SetFinalizer was
// given (its descriptor is kept in the finalizer's record), else from its own header.
func (n *namer) finalizedView(id uint32, base uint64, sp *span) view {
	if ot, ok := n.st.rs.finTypes[id]; ok {
		// abi.PtrType: the Type, then Elem.
		if elem, err := n.h.cache.Word(ot + uint64(n.h.r.abiType.Size)); err == nil {
			if t := n.dwarfType(elem); t != nil {
				return view{typ: resolve(t)}
			}
		}
	}
	return n.headerView(base, sp)
}

// headerView types an object from its own allocation header or its span's large type: the
// runtime records the type of every object over 512 bytes.
func (n *namer) headerView(base uint64, sp *span) view {
	if sp.noscan || sp.small {
		return view{}
	}
	typAddr, data := sp.largeTyp, int64(0)
	if !sp.large {
		w, err := n.h.cache.Word(base)
		if err != nil {
			return view{}
		}
		typAddr, data = w, 8
	}
	if typAddr == 0 {
		return view{}
	}
	t := n.dwarfType(typAddr)
	if t == nil {
		return view{}
	}
	// An allocation of several values of the type (make([]T, n)) is an array; one value in a
	// larger size class is not.
	t = resolve(t)
	size := sizeOf(t)
	return view{typ: t, off: data, array: size > 0 && int64(sp.elemSize)-data >= 2*size}
}

// stackRoot names a stack slot by the local variable that holds it: by its address when the
// variable lives in the frame as a whole, else by the pointer it holds (a variable the
// compiler split between registers and spill slots).
func (n *namer) stackRoot(r root) (holders.Root, leaf, view) {
	if r.ref < 0 {
		return holders.Root{Kind: "goroutine", Name: "stack"}, leaf{}, view{}
	}
	fr := n.st.frames[r.ref]
	g := n.st.gs[fr.g]
	root := holders.Root{Kind: "goroutine", Name: fr.fn, Goroutine: g.id, Wait: g.wait}
	if val, err := n.h.cache.Word(r.addr); err == nil && n.ownClosure(fr, val) {
		// The frame's own closure context: its captured variables read as its locals.
		return root, leaf{typ: &godwarf.FuncType{}, own: true}, view{}
	}
	vars := n.frameLocals(int(r.ref))
	for _, v := range vars {
		if v.Flags&proc.VariableFakeAddress != 0 || v.DwarfType == nil {
			continue
		}
		size := uint64(max(sizeOf(v.DwarfType), 8))
		if r.addr >= v.Addr && r.addr < v.Addr+size {
			root.Var, root.Type = v.Name, typeName(v.DwarfType)
			return root, locate(view{typ: v.DwarfType}, int64(r.addr-v.Addr), n.ix), view{typ: v.DwarfType}
		}
	}
	if val, err := n.h.cache.Word(r.addr); err == nil {
		for _, v := range vars {
			if v.Flags&proc.VariableEscaped != 0 && v.Addr == val && v.DwarfType != nil {
				// A variable moved to the heap (a closure captured it): the slot holds its cell.
				root.Var, root.Type = v.Name, typeName(v.DwarfType)
				return root, leaf{typ: &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8}, Type: v.DwarfType}}, view{}
			}
			if expr, typ, ok := holdsPointer(v, val, 0); ok {
				root.Var, root.Type = v.Name, typeName(v.DwarfType)
				return root, leaf{expr: expr, typ: typ}, view{}
			}
		}
	}
	// A slot of a stack object (a struct the compiler kept on the stack): named through a
	// pointer variable that points at it, in this frame or a callee's.
	if obj, ok := n.stackObjectAt(int(r.ref), r.addr); ok {
		for _, fi := range n.goroutineFrames(fr.g, int(r.ref)) {
			for _, v := range n.frameLocals(fi) {
				if v.Kind != reflect.Ptr || len(v.Children) == 0 || v.Children[0].DwarfType == nil || v.Children[0].Addr != obj.addr {
					continue
				}
				pointee := resolve(v.Children[0].DwarfType)
				owner := n.st.frames[fi]
				root.Name, root.Var, root.Type = owner.fn, v.Name, typeName(v.DwarfType)
				return root, locate(view{typ: pointee}, int64(r.addr-obj.addr), n.ix), view{typ: pointee}
			}
		}
	}
	if name, typ, ok := n.capturedHolding(fr, r.val); ok {
		root.Var, root.Type = name, typeName(typ)
		return root, leaf{typ: typ}, view{}
	}
	if fr.conservative {
		root.Var = "(unnamed word)"
	} else {
		root.Var = "(temporary)"
	}
	return root, leaf{}, view{}
}

// holdsPointer finds, in a loaded variable, the value that is the pointer val: the
// expression that names it within the variable, and its type.
func holdsPointer(v *proc.Variable, val uint64, depth int) (string, godwarf.Type, bool) {
	if v == nil || depth > 4 {
		return "", nil, false
	}
	switch v.Kind {
	case reflect.Ptr, reflect.UnsafePointer:
		if len(v.Children) > 0 && v.Children[0].Addr == val {
			return "", v.DwarfType, true
		}
	case reflect.Slice, reflect.String, reflect.Chan, reflect.Map:
		if v.Base == val {
			return "", v.DwarfType, true
		}
	case reflect.Interface:
		if len(v.Children) > 0 {
			c := &v.Children[0]
			if e, t, ok := holdsPointer(c, val, depth+1); ok {
				return ".(" + typeName(c.DwarfType) + ")" + e, t, true
			}
		}
	case reflect.Struct:
		for i := range v.Children {
			c := &v.Children[i]
			if e, t, ok := holdsPointer(c, val, depth+1); ok {
				return "." + c.Name + e, t, true
			}
		}
	case reflect.Array:
		for i := range v.Children {
			if e, t, ok := holdsPointer(&v.Children[i], val, depth+1); ok {
				return "[i]" + e, t, true
			}
		}
	}
	return "", nil, false
}

// stackObjectAt finds the live stack object of frame fi that holds addr.
func (n *namer) stackObjectAt(fi int, addr uint64) (stackObject, bool) {
	for _, o := range n.st.objects[fi] {
		if addr >= o.addr && addr < o.addr+o.size {
			return o, true
		}
	}
	return stackObject{}, false
}

// capturedHolding names a closure frame's temporary by the variable the closure captured that
// it is a copy of: the one captured pointer whose pointee has the type of the object the word
// points to (typed by its allocation header). The compiler loads captured variables into
// temporaries that DWARF does not describe at every pc.
func (n *namer) capturedHolding(fr frame, val uint64) (string, godwarf.Type, bool) {
	cvs := n.ix.Closure(fr.fn)
	if len(cvs) == 0 {
		return "", nil, false
	}
	si, id, ok := n.h.find(val)
	if !ok {
		return "", nil, false
	}
	sp := &n.h.spans[si]
	obj := n.headerView(sp.base+uint64(id-sp.firstID)*sp.elemSize, sp)
	if obj.typ == nil {
		return "", nil, false
	}
	want := typeName(obj.typ)
	var name string
	var typ godwarf.Type
	for _, c := range cvs {
		if p, ok := resolve(c.Type).(*godwarf.PtrType); ok && typeName(resolve(p.Type)) == want {
			if typ != nil {
				return "", nil, false // two candidates: no guess
			}
			name, typ = strings.TrimPrefix(c.Name, "&"), c.Type
		}
	}
	return name, typ, typ != nil
}

// ownClosure says whether val points at the closure context of the frame's own function (a
// funcval whose code is that function).
func (n *namer) ownClosure(fr frame, val uint64) bool {
	f, ok := n.tab.FuncForPC(fr.pc)
	if !ok || !strings.Contains(f.Name, ".func") {
		return false
	}
	if _, _, ok := n.h.find(val); !ok {
		return false
	}
	fn, err := n.h.cache.Word(val)
	return err == nil && fn == f.Entry
}

// goroutineFrames lists the frames of goroutine gi that hold roots, first, the frame fi.
func (n *namer) goroutineFrames(gi, fi int) []int {
	out := []int{fi}
	for i, f := range n.st.frames {
		if f.g == gi && i != fi {
			out = append(out, i)
		}
	}
	return out
}

// frameLocals lists, loaded, the local variables and arguments of a frame (its own and those
// of the calls inlined into it at its pc).
func (n *namer) frameLocals(fi int) []*proc.Variable {
	if vs, ok := n.locals[fi]; ok {
		return vs
	}
	fr := n.st.frames[fi]
	g := n.st.gs[fr.g]
	var out []*proc.Variable
	cfg := proc.LoadConfig{MaxVariableRecurse: 2, MaxArrayValues: 16, MaxStructFields: -1}
	if dg := n.dgs[g.id]; dg != nil {
		var frames []proc.Stackframe
		err := process.Safely(func() (err error) {
			frames, err = proc.GoroutineStacktrace(n.t.Delve, dg, fr.depth+1, 0)
			return err
		})
		if err == nil && fr.depth < len(frames) {
			tid := 0
			if dg.Thread != nil {
				tid = dg.Thread.ThreadID()
			}
			for d := fr.depth; d >= 0; d-- {
				if d < fr.depth && !frames[d].Inlined {
					break
				}
				process.Safely(func() error {
					scope := proc.FrameToScope(n.t.Delve, n.t.Delve.Memory(), dg, tid, frames[d:]...)
					args, _ := scope.FunctionArguments(cfg)
					vars, _ := scope.LocalVariables(cfg)
					out = append(out, args...)
					out = append(out, vars...)
					return nil
				})
			}
		}
	}
	n.locals[fi] = out
	return out
}
