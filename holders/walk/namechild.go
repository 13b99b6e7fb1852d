package walk

import (
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

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
				return view{typ: cur.chanElem, off: off, array: true, chanBuf: true}, ""
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
	if t == nil {
		// A pointer type DWARF does not describe: the pointer to the type it points to.
		if rt, err := n.h.rtype(typAddr); err == nil && rt.kind == kindPointer {
			if elem, err := n.h.cache.Word(typAddr + uint64(n.h.r.abiType.Size)); err == nil && elem != typAddr {
				if et := n.dwarfType(elem); et != nil {
					t = &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8, Name: "*" + typeName(et)}, Type: et}
					n.rtCache[typAddr] = t
				}
			}
		}
	}
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
