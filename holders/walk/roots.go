package walk

import (
	"encoding/binary"
	"fmt"
)

// rootKind says what kind of GC root holds a pointer.
type rootKind uint8

const (
	rootGlobal    rootKind = iota // a package variable (data or bss)
	rootFinalizer                 // an object with a finalizer: what it points to, and the finalizer
	rootCleanup                   // a cleanup function (runtime.AddCleanup)
	rootWeak                      // a weak pointer's handle
	rootFinq                      // the queue of finalizers ready to run
	rootStack                     // a slot of a goroutine's stack frame
	rootRegister                  // a register of a stopped thread (scanned conservatively)
)

// root is one pointer word the GC starts from.
type root struct {
	kind   rootKind
	addr   uint64 // where the pointer is (0 for a register)
	target uint32 // the slot id of the object it points to
	ref    int32  // rootStack: the frame; rootRegister: the thread; rootFinalizer: the object's slot id
	val    uint64 // the pointer
	// conservative: a word that may or may not be a pointer (a register, a frame without a
	// precise map); the walk reaches from these only what no precise root reaches.
	conservative bool
}

// rootSet collects the roots that point into the heap.
type rootSet struct {
	h        *heap
	finTypes map[uint32]uint64 // object with a finalizer -> the *ptrtype SetFinalizer was given
	roots    []root
	notes    []string
	segments [][2]uint64 // the data and bss segments of every module

	conservative bool // the roots being added are conservative
}

func (rs *rootSet) add(kind rootKind, addr, val uint64, ref int32) {
	if _, id, ok := rs.h.find(val); ok {
		rs.roots = append(rs.roots, root{kind: kind, addr: addr, val: val, target: id, ref: ref, conservative: rs.conservative || kind == rootRegister})
	}
}

// scanBlock adds a root for each word of [addr, addr+n) whose bit is set in mask (one bit per
// word, lowest first), reading the block in chunks.
func (rs *rootSet) scanBlock(kind rootKind, addr, n uint64, mask []byte, ref int32) error {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for off := uint64(0); off < n; off += chunk {
		m := min(chunk, n-off)
		words := m / 8
		first := off / 8
		any := false
		for w := uint64(0); w < words; w++ {
			if i := first + w; i/8 < uint64(len(mask)) && mask[i/8]&(1<<(i%8)) != 0 {
				any = true
				break
			}
		}
		if !any {
			continue
		}
		if err := rs.h.r.mem.Read(buf[:m], addr+off); err != nil {
			return err
		}
		for w := uint64(0); w < words; w++ {
			i := first + w
			if i/8 >= uint64(len(mask)) || mask[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			rs.add(kind, addr+off+w*8, binary.LittleEndian.Uint64(buf[w*8:]), ref)
		}
	}
	return nil
}

// scanConservative adds a root for every word of the block that points into the heap.
func (rs *rootSet) scanConservative(kind rootKind, addr, n uint64, ref int32) error {
	if n == 0 {
		return nil
	}
	if n > 64<<20 {
		return fmt.Errorf("a %d-byte block to scan at %#x: too large", n, addr)
	}
	buf := make([]byte, n)
	if err := rs.h.r.mem.Read(buf, addr); err != nil {
		return err
	}
	rs.conservative = true
	for w := uint64(0); w+8 <= n; w += 8 {
		rs.add(kind, addr+w, binary.LittleEndian.Uint64(buf[w:]), ref)
	}
	rs.conservative = false
	return nil
}

// globals adds the package variables of every module: data and bss under their pointer masks.
func (rs *rootSet) globals() error {
	r := rs.h.r
	md, err := r.global("runtime.firstmoduledata")
	if err != nil {
		return err
	}
	for n := 0; md != 0 && n < 1024; n++ {
		v, err := r.moduledata.Read(r.mem, md)
		if err != nil {
			return err
		}
		for _, seg := range [][2]string{{"data", "edata"}, {"bss", "ebss"}} {
			lo, hi := v.Word(seg[0], 0), v.Word(seg[1], 0)
			if hi < lo || hi-lo > 1<<32 {
				return fmt.Errorf("moduledata: %s segment %#x-%#x is corrupt", seg[0], lo, hi)
			}
			maskPtr := v.Word("gc"+seg[0]+"mask.bytedata", 0)
			nbits := v.Uint("gc" + seg[0] + "mask.n")
			if nbits > (hi-lo)/8+64 {
				return fmt.Errorf("moduledata: the %s segment's pointer mask claims %d words", seg[0], nbits)
			}
			mask := make([]byte, (nbits+7)/8)
			if err := r.mem.Read(mask, maskPtr); err != nil {
				return fmt.Errorf("the pointer mask of the %s segment: %w", seg[0], err)
			}
			rs.segments = append(rs.segments, [2]uint64{lo, hi})
			if err := rs.scanBlock(rootGlobal, lo, hi-lo, mask, -1); err != nil {
				return fmt.Errorf("the %s segment: %w", seg[0], err)
			}
		}
		md = v.Word("next", 0)
	}
	return nil
}

// specials adds what each span's specials keep alive: for a finalizer, everything the object
// points to (not the object) and the finalizer function; a cleanup's function; a weak
// pointer's handle.
func (rs *rootSet) specials() error {
	h := rs.h
	r := h.r
	for i := range h.spans {
		sp := &h.spans[i]
		n := 0
		for s := sp.specials; s != 0; n++ {
			if uint64(n) > maxSpecials(sp) {
				return fmt.Errorf("the span at %#x has more than %d specials: its list is corrupt", sp.base, n)
			}
			v, err := r.special.Read(h.cache, s)
			if err != nil {
				return fmt.Errorf("a special of the span at %#x: %w", sp.base, err)
			}
			kind, off := v.U(r.specialKind), v.U(r.specialOffset)
			switch kind {
			case r.kindFinalizer:
				if off < sp.size {
					obj := sp.base + off/sp.elemSize*sp.elemSize
					_, id, _ := h.find(obj)
					if err := h.pointers(sp, obj, func(slot uint64) bool {
						val, err := h.cache.Word(slot)
						if err == nil {
							rs.add(rootFinalizer, slot, val, int32(id))
						}
						return true
					}); err != nil {
						return err
					}
					// specialfinalizer: the special, then fn.
					fnOff := int64(r.special.Size)
					if r.specialFinalizer != nil {
						fnOff, _ = r.specialFinalizer.Off("fn")
						if otOff, err := r.specialFinalizer.Off("ot"); err == nil {
							if ot, err := h.cache.Word(s + uint64(otOff)); err == nil && ot != 0 {
								if rs.finTypes == nil {
									rs.finTypes = map[uint32]uint64{}
								}
								rs.finTypes[id] = ot
							}
						}
					}
					{
						if fn, err := r.mem.Uint64(s + uint64(fnOff)); err == nil {
							rs.add(rootFinalizer, s+uint64(fnOff), fn, int32(id))
						}
					}
				}
			case r.kindCleanup:
				if r.specialCleanup != nil {
					for _, f := range []string{"cleanup.fn", "cleanup.arg"} {
						if o, err := r.specialCleanup.Off(f); err == nil {
							if val, err := r.mem.Uint64(s + uint64(o)); err == nil {
								rs.add(rootCleanup, s+uint64(o), val, -1)
							}
						}
					}
				}
			case r.kindWeakHandle:
				// specialWeakHandle: the special, then the handle pointer.
				at := s + uint64(r.special.Size)
				if val, err := r.mem.Uint64(at); err == nil {
					rs.add(rootWeak, at, val, -1)
				}
			}
			s = v.U(r.specialNext)
		}
	}
	return nil
}

// queues adds the finalizers queued to run and the cleanups queued to run.
func (rs *rootSet) queues() error {
	r := rs.h.r
	if addr, err := r.global("runtime.allfin"); err == nil && r.finblock != nil {
		fb, _ := r.mem.Uint64(addr)
		finOff, _ := r.finblock.Off("fin")
		for n := 0; fb != 0 && n < 1<<20; n++ {
			v, err := r.finblock.Read(r.mem, fb)
			if err != nil {
				return fmt.Errorf("a block of queued finalizers: %w", err)
			}
			cnt := v.Uint("cnt")
			const finSize = 40 // fn, arg, nret, fint, ot
			if cnt*finSize > uint64(r.finblock.Size) {
				return fmt.Errorf("a block of queued finalizers claims %d entries", cnt)
			}
			for i := uint64(0); i < cnt; i++ {
				at := fb + uint64(finOff) + i*finSize
				for _, w := range []uint64{0, 8} { // fn, arg
					if val, err := r.mem.Uint64(at + w); err == nil {
						rs.add(rootFinq, at+w, val, -1)
					}
				}
			}
			fb = v.Word("alllink", 0)
		}
	}
	if r.cleanupBlock != nil {
		if addr, err := r.global("runtime.gcCleanups"); err == nil {
			q, err := r.structOf("runtime.cleanupQueue")
			if err == nil {
				if o, err := q.Off("all"); err == nil {
					cb, _ := r.mem.Uint64(addr + uint64(o))
					rs.cleanupBlocks(cb)
				}
			}
		}
	}
	return nil
}

func (rs *rootSet) cleanupBlocks(cb uint64) {
	r := rs.h.r
	off, err := r.cleanupBlock.Off("cleanups")
	if err != nil {
		return
	}
	for n := 0; cb != 0 && n < 1<<20; n++ {
		v, err := r.cleanupBlock.Read(r.mem, cb)
		if err != nil {
			return
		}
		cnt := v.Uint("cleanupBlockHeader.n")
		const fnSize = 24 // call, fn, arg
		if cnt*fnSize > uint64(r.cleanupBlock.Size) {
			return
		}
		for i := uint64(0); i < cnt; i++ {
			at := cb + uint64(off) + i*fnSize
			for _, w := range []uint64{8, 16} { // fn, arg
				if val, err := r.mem.Uint64(at + w); err == nil {
					rs.add(rootCleanup, at+w, val, -1)
				}
			}
		}
		cb = v.Word("cleanupBlockHeader.alllink", 0)
	}
}
