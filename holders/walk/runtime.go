package walk

import (
	"fmt"

	"github.com/go-delve/delve/pkg/proc"

	"github.com/memdoctor/memdoctor/process"
)

// rt is what the walk needs of the target's runtime: struct layouts and constants, all from
// the executable's DWARF.
type rt struct {
	t     *process.Target
	bi    *proc.BinaryInfo
	mem   *process.Memory
	cache *process.Cache // set once the heap is read
	ix    *process.Index

	mheap, mspan, special, specialProfile, specialFinalizer, specialCleanup *process.Struct
	moduledata, abiType, g, finblock, cleanupBlock                          *process.Struct
	buckets                                                                 *process.BucketLayout

	pageSize       uint64
	arenaBytes     uint64
	spanInUse      uint64
	mallocHeader   uint64 // objects larger than this carry a type header
	inlineMarkBits uint64 // Green Tea's per-span mark bits, at the end of small-object spans
	gcMaskOnDemand uint64 // abi.TFlagGCMaskOnDemand
	memProfileRate uint64

	kindFinalizer, kindProfile, kindCleanup, kindWeakHandle uint64

	// Fields read once per span, special or goroutine, resolved once.
	spanState, spanStart, spanPages, spanElem, spanClass, spanLargeType, spanSpecials process.Field
	specialKind, specialOffset, specialNext                                           process.Field
	gID, gStatus, gLo, gHi, gWait                                                     process.Field
}

func loadRuntime(t *process.Target, ix *process.Index) (*rt, error) {
	bi := t.Delve.BinInfo()
	r := &rt{t: t, bi: bi, mem: t.Memory(), ix: ix}
	var err error
	layout := func(name string) *process.Struct {
		if err != nil {
			return nil
		}
		var s *process.Struct
		s, err = process.StructOf(bi, name)
		return s
	}
	r.mheap = layout("runtime.mheap")
	r.mspan = layout("runtime.mspan")
	r.special = layout("runtime.special")
	r.specialProfile = layout("runtime.specialprofile")
	r.moduledata = layout("runtime.moduledata")
	r.abiType = layout("internal/abi.Type")
	r.g = layout("runtime.g")
	if err == nil {
		r.buckets, err = process.NewBucketLayout(bi)
	}
	if err != nil {
		return nil, fmt.Errorf("the runtime's structures: %w", err)
	}
	field := func(st *process.Struct, path string) process.Field {
		if err != nil {
			return process.Field{}
		}
		var f process.Field
		f, err = st.Field(path)
		return f
	}
	r.spanState, r.spanStart, r.spanPages = field(r.mspan, "state.s.value"), field(r.mspan, "startAddr"), field(r.mspan, "npages")
	r.spanElem, r.spanClass, r.spanSpecials = field(r.mspan, "elemsize"), field(r.mspan, "spanclass"), field(r.mspan, "specials")
	r.spanLargeType = field(r.mspan, "largeType")
	r.specialKind, r.specialOffset, r.specialNext = field(r.special, "kind"), field(r.special, "offset"), field(r.special, "next")
	r.gID, r.gStatus, r.gLo, r.gHi, r.gWait = field(r.g, "goid"), field(r.g, "atomicstatus.value"), field(r.g, "stack.lo"), field(r.g, "stack.hi"), field(r.g, "waitreason")
	if err != nil {
		return nil, fmt.Errorf("the runtime's structures: %w", err)
	}
	// Optional: a program that never sets a finalizer or a cleanup may not describe them.
	r.specialFinalizer, _ = process.StructOf(bi, "runtime.specialfinalizer")
	r.finblock, _ = process.StructOf(bi, "runtime.finblock")
	r.specialCleanup, _ = process.StructOf(bi, "runtime.specialCleanup")
	r.cleanupBlock, _ = process.StructOf(bi, "runtime.cleanupBlock")

	r.pageSize = uint64(ix.Const("runtime._PageSize", 8192))
	r.arenaBytes = uint64(ix.Const("runtime.heapArenaBytes", 64<<20))
	r.spanInUse = uint64(ix.Const("runtime.mSpanInUse", 1))
	r.mallocHeader = uint64(ix.Const("runtime.minSizeForMallocHeader", 512))
	r.gcMaskOnDemand = uint64(ix.Const("internal/abi.TFlagGCMaskOnDemand", 1<<4))
	r.kindFinalizer = uint64(ix.Const("runtime._KindSpecialFinalizer", 2))
	r.kindWeakHandle = uint64(ix.Const("runtime._KindSpecialWeakHandle", 3))
	r.kindProfile = uint64(ix.Const("runtime._KindSpecialProfile", 4))
	r.kindCleanup = uint64(ix.Const("runtime._KindSpecialCleanup", 7))
	if s, err := process.StructOf(bi, "runtime.spanInlineMarkBits"); err == nil {
		r.inlineMarkBits = uint64(max(s.Size, 0)) // zero without Green Tea
	}
	if r.pageSize == 0 || r.pageSize&(r.pageSize-1) != 0 || r.arenaBytes%r.pageSize != 0 {
		return nil, fmt.Errorf("the runtime's page size %d and arena size %d are inconsistent", r.pageSize, r.arenaBytes)
	}
	if g, ok := ix.Global("runtime.MemProfileRate"); ok {
		v, err := r.mem.Uint64(g.Addr)
		if err == nil {
			r.memProfileRate = v
		}
	}
	return r, nil
}

// global reads the address of a runtime package variable.
func (r *rt) global(name string) (uint64, error) {
	g, ok := r.ix.Global(name)
	if !ok {
		return 0, fmt.Errorf("%s is not in the executable's DWARF", name)
	}
	return g.Addr, nil
}

func (r *rt) structOf(name string) (*process.Struct, error) { return process.StructOf(r.bi, name) }
