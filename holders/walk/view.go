package walk

import (
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/memdoctor/memdoctor/process"
)

// view is what is known of an object's type: a DWARF type placed at an offset in the object,
// possibly repeated (a slice's backing array, a map's groups, a channel's buffer), or the
// context of a closure.
type view struct {
	typ     godwarf.Type // nil: unknown
	off     int64        // where typ starts in the object
	array   bool         // the object holds consecutive typ values from off
	closure string       // the object is the context of this closure function
	// ownClosure: the closure context of the root's own frame, whose captured variables read
	// as the frame's locals.
	ownClosure bool
	mapType    *godwarf.MapType // the object is this map's header
	inMap      mapPart          // the object is part of a map's internals
	chanElem   godwarf.Type     // the object is a channel's header; its buffer holds these
	chanBuf    bool             // the object is a channel's buffer
}

// mapPart is which of a map's internal objects a view is.
type mapPart uint8

const (
	notMap       mapPart = iota
	mapHeader            // the map value points to it
	mapDir               // its directory of tables
	mapTable             // one table
	mapGroups            // a table's groups, or a small map's one group: the slots of keys and values
	trieIndirect         // a sync.Map's (internal/sync.HashTrieMap's) inner node
	trieEntry            // a sync.Map's entry: a key and its value
)

// leaf is the pointer-holding word a path goes through: the expression that names it from
// the object's start, and the DWARF type of the word (a pointer, slice, string, map, channel,
// func or interface), nil when unknown.
type leaf struct {
	expr   string
	typ    godwarf.Type
	parent godwarf.Type // the struct that holds the word, when there is one
	field  string       // its field name in that struct
	rel    int64        // the word's offset within typ (an interface's data word is at 8)
	own    bool         // a frame's pointer to its own closure context
}

// locate names the word at offset o of an object seen through v.
func locate(v view, o int64, ix closureIndex) leaf {
	if v.closure != "" {
		for _, c := range ix.Closure(v.closure) {
			if o >= c.Offset && o < c.Offset+max(sizeOf(c.Type), 8) {
				l := descend(godwarf.ResolveTypedef(c.Type), o-c.Offset)
				name := strings.TrimPrefix(c.Name, "&")
				if v.ownClosure {
					l.expr = "." + name + l.expr
				} else {
					l.expr = "{" + v.closure + "}." + name + l.expr
				}
				return l
			}
		}
		return leaf{expr: fmt.Sprintf("{%s}+%d", v.closure, o)}
	}
	if v.typ == nil || o < v.off {
		return leaf{expr: fmt.Sprintf("+%d", o)}
	}
	rel := o - v.off
	size := sizeOf(v.typ)
	prefix := ""
	if v.array && size > 0 {
		prefix = "[i]"
		rel %= size
	} else if size > 0 && rel >= size {
		return leaf{expr: fmt.Sprintf("+%d", o)}
	}
	l := descend(v.typ, rel)
	l.expr = prefix + l.expr
	return l
}

type closureIndex interface {
	Closure(fn string) []process.ClosureVar
}

// descend walks into a type to the word at rel, building a Go-like expression.
func descend(t godwarf.Type, rel int64) leaf {
	var expr strings.Builder
	var parent godwarf.Type
	field := ""
	for depth := 0; depth < 64; depth++ {
		t = resolve(t)
		switch x := t.(type) {
		case *godwarf.PtrType, *godwarf.MapType, *godwarf.ChanType, *godwarf.FuncType,
			*godwarf.InterfaceType, *godwarf.SliceType, *godwarf.StringType:
			return leaf{expr: expr.String(), typ: t, parent: parent, field: field, rel: rel}
		case *godwarf.StructType:
			f := fieldAt(x, rel)
			if f == nil {
				return leaf{expr: expr.String() + fmt.Sprintf("+%d", rel)}
			}
			switch {
			case isMapGroup(x.StructName) && (f.Name == "slots" || f.Name == "keys" || f.Name == "elems"):
				return mapSlot(&expr, f, rel-f.ByteOffset)
			default:
				expr.WriteString("." + f.Name)
			}
			parent, field = x, f.Name
			rel -= f.ByteOffset
			t = f.Type
		case *godwarf.ArrayType:
			es := sizeOf(x.Type)
			if es <= 0 {
				return leaf{expr: expr.String()}
			}
			expr.WriteString("[i]")
			rel %= es
			t = x.Type
		default:
			return leaf{expr: expr.String(), typ: t}
		}
	}
	return leaf{expr: expr.String()}
}

// mapSlot names a word of a map group's slots: the map's key or value.
func mapSlot(expr *strings.Builder, f *godwarf.StructField, rel int64) leaf {
	arr, ok := resolve(f.Type).(*godwarf.ArrayType)
	if !ok || sizeOf(arr.Type) <= 0 {
		return leaf{expr: expr.String() + "[?]"}
	}
	rel %= sizeOf(arr.Type)
	slot := resolve(arr.Type)
	name := "[value]"
	if f.Name == "keys" {
		name = "[key]"
	}
	if st, ok := slot.(*godwarf.StructType); ok { // one slot: key, elem
		sf := fieldAt(st, rel)
		if sf == nil {
			return leaf{expr: expr.String() + "[?]"}
		}
		if sf.Name == "key" {
			name = "[key]"
		}
		l := descend(sf.Type, rel-sf.ByteOffset)
		l.expr = expr.String() + name + l.expr
		return l
	}
	l := descend(slot, rel)
	l.expr = expr.String() + name + l.expr
	return l
}

func isMapGroup(name string) bool { return strings.Contains(name, "map.group[") }

func fieldAt(st *godwarf.StructType, rel int64) *godwarf.StructField {
	var best *godwarf.StructField
	for _, f := range st.Field {
		size := sizeOf(f.Type)
		if rel >= f.ByteOffset && (rel < f.ByteOffset+size || (size == 0 && rel == f.ByteOffset)) {
			if size > 0 {
				return f
			}
			best = f
		}
	}
	return best
}

// resolve follows named types to their definition, keeping Go's own kinds (maps, channels,
// slices, strings, interfaces, funcs), which Delve models as named types.
func resolve(t godwarf.Type) godwarf.Type {
	for range 32 {
		td, ok := t.(*godwarf.TypedefType)
		if !ok {
			return t
		}
		t = td.Type
	}
	return t
}

// typeName is how a type is shown.
func typeName(t godwarf.Type) string {
	if t == nil {
		return ""
	}
	s := t.String()
	s = strings.TrimPrefix(s, "struct ")
	s = strings.ReplaceAll(s, " void", "")
	return s
}

// sizeOf is a type's size without godwarf's Size, which allocates on every call.
func sizeOf(t godwarf.Type) int64 {
	for range 32 {
		td, ok := t.(*godwarf.TypedefType)
		if !ok || td.Common().ByteSize > 0 {
			break
		}
		t = td.Type
	}
	if t == nil {
		return 0
	}
	if n := t.Common().ByteSize; n > 0 {
		return n
	}
	return t.Size()
}
