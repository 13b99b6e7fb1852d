package process

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
)

// Global is a package-level variable: where it lives and its DWARF type.
type Global struct {
	Name string
	Addr uint64
	Size uint64
	Type godwarf.Type
}

// ClosureVar is a variable a closure captured, at its offset in the closure's context.
type ClosureVar struct {
	Name   string
	Offset int64
	Type   godwarf.Type
}

// Index is what memdoctor needs of the executable's DWARF, gathered in one pass: the
// package variables by address, the runtime's constants, the DWARF type of each runtime type
// descriptor, and the variables each closure captured.
type Index struct {
	Globals  []Global // sorted by address
	consts   map[string]int64
	rtypes   map[uint64]dwarf.Offset // offset in moduledata.types -> type DIE
	closures map[string][]ClosureVar
	image    *proc.Image
}

// maxDWARFEntries bounds the pass over a hostile executable's DWARF.
const maxDWARFEntries = 50_000_000

// BuildIndex reads the executable's DWARF once.
func BuildIndex(bi *proc.BinaryInfo) (*Index, error) {
	if len(bi.Images) == 0 {
		return nil, ErrNoDWARF
	}
	img := bi.Images[0]
	ix := &Index{consts: map[string]int64{}, rtypes: map[uint64]dwarf.Offset{}, closures: map[string][]ClosureVar{}, image: img}
	rdr := img.DwarfReader()
	if rdr == nil {
		return nil, ErrNoDWARF
	}
	depth := 0   // nesting below the compile unit
	fn := ""     // the subprogram being read, at depth 1
	fnDepth := 0 // its depth
	for n := 0; ; n++ {
		if n > maxDWARFEntries {
			return nil, fmt.Errorf("more than %d DWARF entries: refusing to read further", maxDWARFEntries)
		}
		e, err := rdr.Next()
		if err != nil {
			return nil, fmt.Errorf("reading DWARF: %w", err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 { // end of a list of children
			depth--
			if depth < fnDepth {
				fn, fnDepth = "", 0
			}
			continue
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			depth = 0
		case dwarf.TagVariable, dwarf.TagFormalParameter:
			if depth == 1 && e.Tag == dwarf.TagVariable {
				ix.addGlobal(img, e)
			} else if fn != "" {
				if off, ok := e.Val(godwarf.AttrGoClosureOffset).(int64); ok {
					ix.addClosureVar(img, fn, off, e)
				}
			}
		case dwarf.TagConstant:
			if name, _ := e.Val(dwarf.AttrName).(string); strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal/") {
				if v, ok := e.Val(dwarf.AttrConstValue).(int64); ok {
					ix.consts[name] = v
				}
			}
		case dwarf.TagSubprogram:
			if depth == 1 {
				fn, _ = e.Val(dwarf.AttrName).(string)
				fnDepth = depth + 1
			}
		}
		if off, ok := e.Val(godwarf.AttrGoRuntimeType).(uint64); ok {
			ix.rtypes[off] = e.Offset
		}
		if e.Children {
			depth++
		}
	}
	sort.Slice(ix.Globals, func(i, j int) bool { return ix.Globals[i].Addr < ix.Globals[j].Addr })
	return ix, nil
}

func (ix *Index) addGlobal(img *proc.Image, e *dwarf.Entry) {
	name, _ := e.Val(dwarf.AttrName).(string)
	loc, _ := e.Val(dwarf.AttrLocation).([]byte)
	const opAddr = 0x03
	if name == "" || len(loc) != 9 || loc[0] != opAddr {
		return
	}
	toff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return
	}
	typ, err := img.Type(toff)
	if err != nil {
		return
	}
	addr := binary.LittleEndian.Uint64(loc[1:]) + img.StaticBase
	ix.Globals = append(ix.Globals, Global{Name: name, Addr: addr, Size: uint64(max(typ.Size(), 0)), Type: typ})
}

func (ix *Index) addClosureVar(img *proc.Image, fn string, off int64, e *dwarf.Entry) {
	name, _ := e.Val(dwarf.AttrName).(string)
	toff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return
	}
	typ, err := img.Type(toff)
	if err != nil {
		return
	}
	ix.closures[fn] = append(ix.closures[fn], ClosureVar{Name: name, Offset: off, Type: typ})
}

// GlobalAt returns the package variable that holds addr, if any.
func (ix *Index) GlobalAt(addr uint64) (Global, bool) {
	i := sort.Search(len(ix.Globals), func(i int) bool { return ix.Globals[i].Addr > addr })
	// Variables of size zero share addresses; take the last one starting at or below addr
	// that covers it.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		g := ix.Globals[j]
		if addr >= g.Addr && addr < g.Addr+max(g.Size, 1) {
			return g, true
		}
	}
	return Global{}, false
}

// Global returns the package variable of that name.
func (ix *Index) Global(name string) (Global, bool) {
	for _, g := range ix.Globals {
		if g.Name == name {
			return g, true
		}
	}
	return Global{}, false
}

// Const returns a constant of the runtime (or an internal package), with a default for a
// build that does not record it.
func (ix *Index) Const(name string, def int64) int64 {
	if v, ok := ix.consts[name]; ok {
		return v
	}
	return def
}

// RuntimeType returns the DWARF type of the runtime type descriptor at off bytes into
// moduledata.types.
func (ix *Index) RuntimeType(off uint64) (godwarf.Type, bool) {
	d, ok := ix.rtypes[off]
	if !ok {
		return nil, false
	}
	t, err := ix.image.Type(d)
	return t, err == nil
}

// Closure returns the variables the closure function fn captured, by offset.
func (ix *Index) Closure(fn string) []ClosureVar { return ix.closures[fn] }
