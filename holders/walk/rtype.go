package walk

import (
	"encoding/binary"
	"fmt"
)

// rtype is a runtime type descriptor (internal/abi.Type) as the walk needs it: its size, how
// many of its first bytes may hold pointers, and which words do.
type rtype struct {
	addr     uint64
	size     uint64
	ptrBytes uint64
	kind     uint8
	tflag    uint64
	mask     []uint64 // one bit per word of the first ptrBytes bytes
}

const (
	kindArray   = 17
	kindPointer = 22
	kindStruct  = 25
	kindMask    = 0x1f

	// maxTypeWords bounds the pointer mask memdoctor builds for one type (a 1 GiB array).
	maxTypeWords = 1 << 27
)

func (h *heap) rtype(addr uint64) (*rtype, error) {
	if t, ok := h.types[addr]; ok {
		return t, nil
	}
	t, err := h.readRtype(addr, 0)
	if err != nil {
		return nil, err
	}
	h.types[addr] = t
	return t, nil
}

func (h *heap) readRtype(addr uint64, depth int) (*rtype, error) {
	r := h.r
	v, err := r.abiType.Read(h.cache, addr)
	if err != nil {
		return nil, fmt.Errorf("a type descriptor: %w", err)
	}
	t := &rtype{addr: addr, size: v.Uint("Size_"), ptrBytes: v.Uint("PtrBytes"), kind: uint8(v.Uint("Kind_")) & kindMask, tflag: v.Uint("TFlag")}
	if t.ptrBytes > t.size || t.ptrBytes%8 != 0 || t.ptrBytes/8 > maxTypeWords {
		return nil, fmt.Errorf("type descriptor at %#x: %d pointer bytes in %d: corrupt", addr, t.ptrBytes, t.size)
	}
	words := t.ptrBytes / 8
	t.mask = make([]uint64, (words+63)/64)
	if words == 0 {
		return t, nil
	}
	gcdata := v.Word("GCData", 0)
	if t.tflag&r.gcMaskOnDemand != 0 {
		// GCData points at a slot that the runtime fills with the mask on first use.
		p, err := r.mem.Uint64(gcdata)
		if err != nil {
			return nil, fmt.Errorf("the pointer mask of the type at %#x: %w", addr, err)
		}
		inProgress, _ := r.global("runtime.inProgress")
		if p == 0 || p == inProgress {
			if depth > 16 {
				return nil, fmt.Errorf("type at %#x nests too deep", addr)
			}
			return t, h.buildMask(t, depth)
		}
		gcdata = p
	}
	raw := make([]byte, (words+7)/8)
	if err := r.mem.Read(raw, gcdata); err != nil {
		return nil, fmt.Errorf("the pointer mask of the type at %#x: %w", addr, err)
	}
	for i, b := range raw {
		t.mask[i/8] |= uint64(b) << (8 * (i % 8))
	}
	return t, nil
}

// buildMask builds a type's pointer mask from its element or field types, as the runtime's
// buildGCMask does for a large type whose mask no GC has needed yet.
func (h *heap) buildMask(t *rtype, depth int) error {
	set := func(off uint64, sub *rtype) {
		for w := uint64(0); w < sub.ptrBytes/8; w++ {
			if sub.mask[w/64]&(1<<(w%64)) != 0 {
				i := off/8 + w
				if i/64 < uint64(len(t.mask)) {
					t.mask[i/64] |= 1 << (i % 64)
				}
			}
		}
	}
	// Both ArrayType and StructType begin with the Type; their own fields follow it.
	base := uint64(h.r.abiType.Size)
	switch t.kind {
	case kindArray:
		var b [16]byte // Elem *Type, Slice *Type
		if err := h.r.mem.Read(b[:8], t.addr+base); err != nil {
			return err
		}
		elem, err := h.readRtype(binary.LittleEndian.Uint64(b[:8]), depth+1)
		if err != nil {
			return err
		}
		if elem.size == 0 {
			return nil
		}
		for off := uint64(0); off+elem.ptrBytes <= t.ptrBytes && off < t.size; off += elem.size {
			set(off, elem)
		}
	case kindStruct:
		var b [24]byte // PkgPath Name (one pointer), Fields []StructField
		if err := h.r.mem.Read(b[:], t.addr+base); err != nil {
			return err
		}
		fields, n := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
		if n > 1<<16 {
			return fmt.Errorf("type at %#x claims %d fields", t.addr, n)
		}
		const fieldSize = 24 // Name, Typ *Type, Offset uintptr
		raw := make([]byte, n*fieldSize)
		if err := h.r.mem.Read(raw, fields); err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			ft, err := h.readRtype(binary.LittleEndian.Uint64(raw[i*fieldSize+8:]), depth+1)
			if err != nil {
				return err
			}
			set(binary.LittleEndian.Uint64(raw[i*fieldSize+16:]), ft)
		}
	default:
		return fmt.Errorf("type at %#x (kind %d) has an on-demand pointer mask memdoctor cannot build", t.addr, t.kind)
	}
	return nil
}
