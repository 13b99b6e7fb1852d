package snapshot

import (
	"encoding/binary"
	"fmt"

	"github.com/memdoctor/memdoctor/process"
)

// layout is what a snapshot needs of the target's runtime: where its span, goroutine and
// thread tables are, and their structures' layouts, all from the executable's DWARF.
type layout struct {
	pageSize, chunkSize, spanInUse, gDead uint64

	allspans         uint64 // &mheap_.allspans (a slice: pointer, length)
	persistentChunks uint64 // &runtime.persistentChunks
	allgs            uint64 // &runtime.allgs (a slice)
	allm             uint64 // &runtime.allm

	span   record // state, startAddr, npages, spanclass
	g      record // status, stack lo and hi
	m      record // g0, gsignal, alllink
	gStack record // the g's stack fields alone, for g0 and gsignal
}

// record is a few fields of a struct, read together from its first bytes.
type record struct {
	f    []process.Field
	size int64 // the bytes that hold them all
}

func newRecord(s *process.Struct, paths ...string) (record, error) {
	r := record{}
	for _, p := range paths {
		f, err := s.Field(p)
		if err != nil {
			return record{}, err
		}
		if f.Size != 1 && f.Size != 2 && f.Size != 4 && f.Size != 8 {
			return record{}, fmt.Errorf("%s.%s: a %d-byte field", s.Name, p, f.Size)
		}
		r.f = append(r.f, f)
		r.size = max(r.size, f.Off+f.Size)
	}
	return r, nil
}

// read reads the record at addr into out (one value per field), using buf.
func (r record) read(m process.Reader, addr uint64, buf []byte, out []uint64) error {
	b := buf[:r.size]
	if err := m.Read(b, addr); err != nil {
		return err
	}
	for i, f := range r.f {
		v := b[f.Off:]
		switch f.Size {
		case 1:
			out[i] = uint64(v[0])
		case 2:
			out[i] = uint64(binary.LittleEndian.Uint16(v))
		case 4:
			out[i] = uint64(binary.LittleEndian.Uint32(v))
		default:
			out[i] = binary.LittleEndian.Uint64(v)
		}
	}
	return nil
}

func newLayout(t *process.Target, ix *process.Index) (*layout, error) {
	bi := t.Delve.BinInfo()
	l := &layout{
		pageSize:  uint64(ix.Const("runtime._PageSize", 8192)),
		chunkSize: uint64(ix.Const("runtime.persistentChunkSize", 256<<10)),
		spanInUse: uint64(ix.Const("runtime.mSpanInUse", 1)),
		gDead:     uint64(ix.Const("runtime._Gdead", 6)),
	}
	if l.pageSize == 0 || l.pageSize&(l.pageSize-1) != 0 || l.chunkSize == 0 || l.chunkSize > 64<<20 {
		return nil, fmt.Errorf("the runtime's page size %d or persistent chunk size %d is inconsistent", l.pageSize, l.chunkSize)
	}
	global := func(name string) uint64 {
		g, ok := ix.Global(name)
		if !ok {
			return 0
		}
		return g.Addr
	}
	mheap, pc := global("runtime.mheap_"), global("runtime.persistentChunks")
	l.allgs, l.allm = global("runtime.allgs"), global("runtime.allm")
	if mheap == 0 || pc == 0 || l.allgs == 0 || l.allm == 0 {
		return nil, fmt.Errorf("the runtime's mheap_, persistentChunks, allgs or allm is not in the executable's DWARF")
	}
	var err error
	structOf := func(name string) *process.Struct {
		if err != nil {
			return nil
		}
		var s *process.Struct
		s, err = process.StructOf(bi, name)
		return s
	}
	mh, ms, g, m := structOf("runtime.mheap"), structOf("runtime.mspan"), structOf("runtime.g"), structOf("runtime.m")
	if err != nil {
		return nil, fmt.Errorf("the runtime's structures: %w", err)
	}
	off, err := mh.Off("allspans")
	if err != nil {
		return nil, err
	}
	l.allspans = mheap + uint64(off)
	l.persistentChunks = pc
	if l.span, err = newRecord(ms, "state.s.value", "startAddr", "npages", "spanclass"); err != nil {
		return nil, err
	}
	if l.g, err = newRecord(g, "atomicstatus.value", "stack.lo", "stack.hi"); err != nil {
		return nil, err
	}
	if l.gStack, err = newRecord(g, "stack.lo", "stack.hi"); err != nil {
		return nil, err
	}
	if l.m, err = newRecord(m, "g0", "gsignal", "alllink"); err != nil {
		return nil, err
	}
	return l, nil
}
