package walk

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sort"

	"github.com/memdoctor/memdoctor/process"
)

// span is one in-use span of the target's heap, as the walk needs it.
type span struct {
	base     uint64
	size     uint64 // npages * pageSize
	elemSize uint64
	nelems   uint64
	firstID  uint32 // the dense id of the span's first object slot
	noscan   bool
	small    bool   // pointer bits at the end of the span (objects of at most 512 bytes)
	large    bool   // one object, typed by largeType
	largeTyp uint64 // *_type of a large object
	specials uint64 // *special: the head of the span's specials
	heapBits []uint64
}

// heap indexes the spans by page, as the runtime's own arena index does.
type heap struct {
	r          *rt
	lastArena  uint64 // the arena of the last find, and its pages: pointers cluster
	lastPages  []int32
	unreadable int    // spans whose memory could not be read
	spans      []span // sorted by base
	arenas     map[uint64][]int32
	slots      uint32 // total object slots: the dense ids
	types      map[uint64]*rtype
	cache      *process.Cache
}

// maxSpans bounds what a hostile target can make the walk allocate: one span per heap page of
// a 4 TiB heap.
const maxSpans = 1 << 29

// maxObjects bounds the objects (object slots of in-use spans) a reading keeps a few words for:
// about 5 GiB of memdoctor's memory for a heap of tens of GiB.
const maxObjects = 1 << 28

// maxSpecials bounds a span's list of specials: a few kinds per object at most (a corrupt list
// that loops ends there).
func maxSpecials(sp *span) uint64 { return 16*sp.nelems + 16 }

func readHeap(r *rt, cache *process.Cache) (*heap, error) {
	h := &heap{r: r, arenas: map[uint64][]int32{}, types: map[uint64]*rtype{}, cache: cache}
	r.cache = cache
	mheapAddr, err := r.global("runtime.mheap_")
	if err != nil {
		return nil, err
	}
	allOff, err := r.mheap.Off("allspans")
	if err != nil {
		return nil, err
	}
	ptr, err := r.mem.Uint64(mheapAddr + uint64(allOff))
	if err != nil {
		return nil, fmt.Errorf("mheap_.allspans: %w", err)
	}
	n, err := r.mem.Uint64(mheapAddr + uint64(allOff) + 8)
	if err != nil {
		return nil, fmt.Errorf("mheap_.allspans: %w", err)
	}
	if n > maxSpans || (r.t.ReadableBytes() > 0 && n > r.t.ReadableBytes()/r.pageSize) {
		return nil, fmt.Errorf("mheap_.allspans claims %d spans, more than the memory that can be read holds", n)
	}
	const chunk = 4096
	buf := make([]byte, chunk*8)
	var ids uint64
	for i := uint64(0); i < n; i += chunk {
		m := min(chunk, n-i)
		if err := r.mem.Read(buf[:m*8], ptr+i*8); err != nil {
			return nil, fmt.Errorf("mheap_.allspans: %w", err)
		}
		for j := uint64(0); j < m; j++ {
			sp, ok, err := h.readSpan(binary.LittleEndian.Uint64(buf[j*8:]))
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if !r.t.Readable(sp.base, sp.size) {
				// A span whose memory is not there (a truncated core): its objects cannot be
				// read; say how many once.
				h.unreadable++
				continue
			}
			if ids+sp.nelems > maxObjects {
				return nil, fmt.Errorf("the heap holds more than %d objects: more than memdoctor reads", uint64(maxObjects))
			}
			ids += sp.nelems
			h.spans = append(h.spans, sp)
		}
	}
	sort.Slice(h.spans, func(i, j int) bool { return h.spans[i].base < h.spans[j].base })
	ids = 0
	for i := range h.spans {
		sp := &h.spans[i]
		if i > 0 && sp.base < h.spans[i-1].base+h.spans[i-1].size {
			return nil, fmt.Errorf("spans at %#x and %#x overlap: the heap is corrupt", h.spans[i-1].base, sp.base)
		}
		sp.firstID = uint32(ids)
		ids += sp.nelems
		h.index(i)
	}
	h.slots = uint32(ids)
	return h, nil
}

// readSpan reads one mspan; ok is false for a span that holds no objects now.
func (h *heap) readSpan(addr uint64) (span, bool, error) {
	r := h.r
	if addr == 0 {
		return span{}, false, nil
	}
	v, err := r.mspan.Read(h.cache, addr)
	if err != nil {
		return span{}, false, fmt.Errorf("an mspan: %w", err)
	}
	if v.U(r.spanState) != r.spanInUse {
		return span{}, false, nil
	}
	sp := span{base: v.U(r.spanStart), size: v.U(r.spanPages) * r.pageSize, elemSize: v.U(r.spanElem)}
	if sp.size == 0 || sp.elemSize == 0 || sp.elemSize > sp.size || sp.base%r.pageSize != 0 || sp.size > 1<<40 {
		return span{}, false, fmt.Errorf("mspan at %#x: base %#x, %d bytes of %d-byte objects: not a heap span", addr, sp.base, sp.size, sp.elemSize)
	}
	sp.nelems = sp.size / sp.elemSize
	class := v.U(r.spanClass)
	sp.noscan = class&1 != 0
	sizeclass := class >> 1
	sp.small = sp.elemSize <= r.mallocHeader
	sp.large = sizeclass == 0
	sp.largeTyp = v.U(r.spanLargeType)
	sp.specials = v.U(r.spanSpecials)
	return sp, true, nil
}

// index records span i for each of its pages.
func (h *heap) index(i int) {
	sp := &h.spans[i]
	pagesPerArena := h.r.arenaBytes / h.r.pageSize
	for p := sp.base; p < sp.base+sp.size; p += h.r.pageSize {
		a := p / h.r.arenaBytes
		pages := h.arenas[a]
		if pages == nil {
			pages = make([]int32, pagesPerArena)
			h.arenas[a] = pages
		}
		pages[(p%h.r.arenaBytes)/h.r.pageSize] = int32(i + 1)
	}
}

// find returns the span holding addr and the object's slot id, or ok false for an address
// outside the heap or in a span's unused tail.
func (h *heap) find(addr uint64) (spanIdx int32, id uint32, ok bool) {
	a := addr / h.r.arenaBytes
	pages := h.lastPages
	if a != h.lastArena || pages == nil {
		if pages = h.arenas[a]; pages == nil {
			return 0, 0, false
		}
		h.lastArena, h.lastPages = a, pages
	}
	i := pages[(addr%h.r.arenaBytes)/h.r.pageSize] - 1
	if i < 0 {
		return 0, 0, false
	}
	sp := &h.spans[i]
	if addr < sp.base {
		return 0, 0, false
	}
	k := (addr - sp.base) / sp.elemSize
	if k >= sp.nelems {
		return 0, 0, false
	}
	return i, sp.firstID + uint32(k), true
}

// spanOf returns the span of a slot id.
func (h *heap) spanOf(id uint32) *span {
	i := sort.Search(len(h.spans), func(i int) bool { return h.spans[i].firstID+uint32(h.spans[i].nelems) > id })
	return &h.spans[i]
}

// objBase is the address of a slot.
func (h *heap) objBase(id uint32) (uint64, *span) {
	sp := h.spanOf(id)
	return sp.base + uint64(id-sp.firstID)*sp.elemSize, sp
}

// pointers calls fn with the address of each pointer-typed word of the object at base, as the
// runtime's typePointersOf finds them; fn returns false to stop.
func (h *heap) pointers(sp *span, base uint64, fn func(slot uint64) bool) error {
	if sp.noscan {
		return nil
	}
	if sp.small {
		return h.smallPointers(sp, base, fn)
	}
	var typAddr, data uint64
	if sp.large {
		typAddr, data = sp.largeTyp, base
	} else {
		var err error
		typAddr, err = h.cache.Word(base)
		if err != nil {
			return err
		}
		data = base + 8
	}
	if typAddr == 0 {
		return nil // not yet typed (delayed zeroing): no pointers
	}
	t, err := h.rtype(typAddr)
	if err != nil {
		return err
	}
	if t.size == 0 || t.ptrBytes == 0 {
		return nil
	}
	end := base + sp.elemSize
	for elem := data; elem < end; elem += t.size {
		for w := uint64(0); w < t.ptrBytes/8; w++ {
			if t.mask[w/64]&(1<<(w%64)) == 0 {
				continue
			}
			a := elem + w*8
			if a >= end {
				return nil
			}
			if !fn(a) {
				return nil
			}
		}
	}
	return nil
}

func (h *heap) smallPointers(sp *span, base uint64, fn func(uint64) bool) error {
	if sp.heapBits == nil {
		words := sp.size / 8
		n := (words + 63) / 64
		raw := make([]byte, words/8)
		at := sp.base + sp.size - words/8
		if h.r.inlineMarkBits > 0 && sp.elemSize >= 16 {
			at -= h.r.inlineMarkBits
		}
		if err := h.r.mem.Read(raw, at); err != nil {
			return fmt.Errorf("the pointer bits of the span at %#x: %w", sp.base, err)
		}
		sp.heapBits = make([]uint64, n)
		for i, b := range raw {
			sp.heapBits[i/8] |= uint64(b) << (8 * (i % 8))
		}
	}
	first := (base - sp.base) / 8
	last := first + sp.elemSize/8
	for w := first; w < last; {
		word := sp.heapBits[w/64] >> (w % 64)
		if word == 0 {
			w = (w/64 + 1) * 64
			continue
		}
		w += uint64(bits.TrailingZeros64(word))
		if w >= last {
			break
		}
		if !fn(sp.base + w*8) {
			return nil
		}
		w++
	}
	return nil
}

// ptrWord is one pointer word of an object: its offset in the object and its value.
type ptrWord struct {
	off uint32
	val uint64
}

// ptrWords appends the object's pointer words to out. A small object is read from one cached
// block; the others word by word through the cache.
func (h *heap) ptrWords(sp *span, base uint64, out []ptrWord) ([]ptrWord, error) {
	if sp.noscan {
		return out, nil
	}
	if sp.small {
		blk := base &^ (process.CacheBlock - 1)
		if base+sp.elemSize <= blk+process.CacheBlock {
			b, err := h.cache.Block(blk)
			if err != nil {
				return out, err
			}
			err = h.smallPointers(sp, base, func(slot uint64) bool {
				out = append(out, ptrWord{uint32(slot - base), binary.LittleEndian.Uint64(b[slot-blk:])})
				return true
			})
			return out, err
		}
	}
	var rerr error
	err := h.pointers(sp, base, func(slot uint64) bool {
		v, err := h.cache.Word(slot)
		if err != nil {
			rerr = err
			return false
		}
		out = append(out, ptrWord{uint32(slot - base), v})
		return true
	})
	if err == nil {
		err = rerr
	}
	return out, err
}
