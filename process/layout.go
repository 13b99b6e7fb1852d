package process

import (
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
)

// Struct is the layout of one of the runtime's struct types, from DWARF: memdoctor never
// assumes an offset that the executable can tell it.
type Struct struct {
	Name   string
	Size   int64
	fields map[string]*godwarf.StructField
}

// StructOf returns the layout of a named struct type.
func StructOf(bi *proc.BinaryInfo, name string) (*Struct, error) {
	t, err := bi.FindType(name)
	if err != nil {
		return nil, fmt.Errorf("type %s not in the executable's DWARF: %w", name, err)
	}
	st, ok := godwarf.ResolveTypedef(t).(*godwarf.StructType)
	if !ok {
		return nil, fmt.Errorf("type %s is not a struct", name)
	}
	s := &Struct{Name: name, Size: st.ByteSize, fields: map[string]*godwarf.StructField{}}
	for _, f := range st.Field {
		s.fields[f.Name] = f
	}
	return s, nil
}

// Has says whether the struct has a field.
func (s *Struct) Has(field string) bool { _, ok := s.fields[field]; return ok }

// Off returns a field's offset; a dotted path (state.s.value) walks into nested structs.
func (s *Struct) Off(path string) (int64, error) {
	off, _, err := s.field(path)
	return off, err
}

// Field returns a field's offset and type.
func (s *Struct) field(path string) (int64, godwarf.Type, error) {
	var off int64
	fields := s.fields
	var typ godwarf.Type
	for i, name := range splitDots(path) {
		f, ok := fields[name]
		if !ok {
			return 0, nil, fmt.Errorf("%s has no field %s", s.Name, path)
		}
		off += f.ByteOffset
		typ = f.Type
		if i < len(splitDots(path))-1 {
			st, ok := godwarf.ResolveTypedef(f.Type).(*godwarf.StructType)
			if !ok {
				return 0, nil, fmt.Errorf("%s.%s is not a struct", s.Name, name)
			}
			fields = map[string]*godwarf.StructField{}
			for _, g := range st.Field {
				fields[g.Name] = g
			}
		}
	}
	return off, typ, nil
}

// Field is a resolved field: its offset and size, for reading it many times.
type Field struct {
	Off, Size int64
}

// Field resolves a field (a dotted path walks into nested structs); a missing field is an
// error.
func (s *Struct) Field(path string) (Field, error) {
	off, typ, err := s.field(path)
	if err != nil {
		return Field{}, err
	}
	return Field{Off: off, Size: typ.Size()}, nil
}

// FieldType returns a field's type.
func (s *Struct) FieldType(path string) (godwarf.Type, error) {
	_, t, err := s.field(path)
	return t, err
}

// Offsets resolves several fields at once; the first missing one is the error.
func (s *Struct) Offsets(paths ...string) ([]int64, error) {
	out := make([]int64, len(paths))
	for i, p := range paths {
		o, err := s.Off(p)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// Reader reads the target's memory: *Memory, or a cache in front of it.
type Reader interface {
	Read(buf []byte, addr uint64) error
}

// Read reads one value of the struct at addr.
func (s *Struct) Read(m Reader, addr uint64) (Value, error) {
	if s.Size <= 0 || s.Size > MaxRead {
		return Value{}, fmt.Errorf("%s has an unreadable size %d", s.Name, s.Size)
	}
	b := make([]byte, s.Size)
	if err := m.Read(b, addr); err != nil {
		return Value{}, fmt.Errorf("reading a %s: %w", s.Name, err)
	}
	return Value{s: s, b: b, Addr: addr}, nil
}

// Value is one struct read from the target.
type Value struct {
	s    *Struct
	b    []byte
	Addr uint64
}

// Uint reads an unsigned field of any size (1, 2, 4 or 8 bytes); a missing field reads 0.
func (v Value) Uint(path string) uint64 {
	off, typ, err := v.s.field(path)
	if err != nil || off < 0 {
		return 0
	}
	size := typ.Size()
	if off+size > int64(len(v.b)) {
		return 0
	}
	b := v.b[off:]
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// U reads a resolved unsigned field of 1, 2, 4 or 8 bytes.
func (v Value) U(f Field) uint64 {
	if f.Off < 0 || f.Off+f.Size > int64(len(v.b)) {
		return 0
	}
	b := v.b[f.Off:]
	switch f.Size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Word reads the pointer-sized word at a field's offset plus extra bytes (for the length of a
// slice: Word("ftab", 8)).
func (v Value) Word(path string, extra int64) uint64 {
	off, err := v.s.Off(path)
	if err != nil {
		return 0
	}
	off += extra
	if off < 0 || off+8 > int64(len(v.b)) {
		return 0
	}
	return binary.LittleEndian.Uint64(v.b[off:])
}

// Bytes is the struct's bytes as read.
func (v Value) Bytes() []byte { return v.b }
