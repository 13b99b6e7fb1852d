package process

import (
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/proc"
)

// The runtime's memory profile (src/runtime/mprof.go) lives in its own memory: runtime.mbuckets
// heads a list, linked by allnext, of every memory-profile bucket. Each bucket is a header
// (runtime.bucket) followed by its stack of nstk return PCs and then its memRecord: the
// published ("active") counts and three per-cycle ones ("future") not yet published. Go 1.26's
// memRecordCycle counts allocations, frees and their bytes; Go 1.27's only the counts, the
// bytes being the counts times the bucket's size. Every layout is read from DWARF.

// MaxBucketStack bounds a bucket's stack: the runtime keeps at most 1024 frames
// (maxProfStackDepth), whatever a corrupt nstk claims.
const MaxBucketStack = 1024

// memProfileBucket is runtime.memProfile, the bucket type of the memory profile.
const memProfileBucket = 1

// BucketLayout is where a memory-profile bucket keeps what the heap profile reads.
type BucketLayout struct {
	Header                int64 // sizeof(runtime.bucket): the stack follows it
	Record                int64 // sizeof(runtime.memRecord)
	allnext, typ          Field
	size, nstk            Field
	active                int64 // offset of memRecord.active
	future                int64 // offset of memRecord.future[0]
	cycle                 int64 // sizeof(runtime.memRecordCycle)
	allocs, frees         Field // in a memRecordCycle
	allocBytes, freeBytes Field // Go 1.26; Size 0 where the release keeps no bytes
	Futures               int   // len(memRecord.future)
	hasBytes              bool
}

// NewBucketLayout reads the layouts of runtime.bucket, runtime.memRecord and
// runtime.memRecordCycle from the executable's DWARF.
func NewBucketLayout(bi *proc.BinaryInfo) (*BucketLayout, error) {
	b, err := StructOf(bi, "runtime.bucket")
	if err != nil {
		return nil, err
	}
	rec, err := StructOf(bi, "runtime.memRecord")
	if err != nil {
		return nil, err
	}
	cyc, err := StructOf(bi, "runtime.memRecordCycle")
	if err != nil {
		return nil, err
	}
	l := &BucketLayout{Header: b.Size, Record: rec.Size, cycle: cyc.Size}
	for _, f := range []struct {
		s    *Struct
		path string
		to   *Field
	}{{b, "allnext", &l.allnext}, {b, "typ", &l.typ}, {b, "size", &l.size}, {b, "nstk", &l.nstk},
		{cyc, "allocs", &l.allocs}, {cyc, "frees", &l.frees}} {
		if *f.to, err = f.s.Field(f.path); err != nil {
			return nil, fmt.Errorf("the runtime's memory profile: %w", err)
		}
	}
	if cyc.Has("alloc_bytes") && cyc.Has("free_bytes") {
		l.allocBytes, _ = cyc.Field("alloc_bytes")
		l.freeBytes, _ = cyc.Field("free_bytes")
		l.hasBytes = true
	}
	if l.active, err = rec.Off("active"); err != nil {
		return nil, err
	}
	if l.future, err = rec.Off("future"); err != nil {
		return nil, err
	}
	if l.cycle > 0 {
		l.Futures = int((rec.Size - l.future) / l.cycle)
	}
	return l, l.check()
}

// check refuses a layout memdoctor cannot read safely.
func (l *BucketLayout) check() error {
	switch {
	case l.Header <= 0 || l.Header > 256 || l.Header%8 != 0:
		return fmt.Errorf("runtime.bucket has an unexpected size %d", l.Header)
	case l.cycle <= 0 || l.cycle > 64 || l.Record <= 0 || l.Record > 512:
		return fmt.Errorf("runtime.memRecord has an unexpected size %d (cycle %d)", l.Record, l.cycle)
	case l.Futures != 3:
		return fmt.Errorf("runtime.memRecord has %d future cycles, memdoctor knows 3", l.Futures)
	}
	return nil
}

// HasBytes says whether the release counts bytes in each cycle (Go 1.26) or only objects
// (Go 1.27, whose bytes are the counts times the bucket's size).
func (l *BucketLayout) HasBytes() bool { return l.hasBytes }

// Cycle is one memRecordCycle: allocations and frees, in objects and bytes.
type Cycle struct {
	Allocs, Frees, AllocBytes, FreeBytes uint64
}

// Add accumulates c into a.
func (a *Cycle) Add(c Cycle) {
	a.Allocs += c.Allocs
	a.Frees += c.Frees
	a.AllocBytes += c.AllocBytes
	a.FreeBytes += c.FreeBytes
}

// Zero says whether nothing was counted.
func (a Cycle) Zero() bool { return a == Cycle{} }

// Bucket is one memory-profile bucket as read from the target.
type Bucket struct {
	Addr    uint64
	AllNext uint64   // the next bucket of runtime.mbuckets' list; 0 ends it
	Size    uint64   // the allocations' size, as the profile records it
	Stack   []uint64 // return PCs, one per logical frame, innermost first
	Active  Cycle    // the published counts, as of the last GC's mark termination
	Future  [3]Cycle // the counts of cycles not yet published, by cycle % 3
}

// ReadBucket reads the bucket at addr: its header, then its stack and record in one read.
// A bucket of another profile, or whose header claims more than MaxBucketStack frames, is an
// error: the list is being written, or memory is corrupt.
func (l *BucketLayout) ReadBucket(m Reader, addr uint64) (Bucket, error) {
	if addr%8 != 0 {
		return Bucket{}, fmt.Errorf("a memory-profile bucket at %#x is misaligned", addr)
	}
	hdr := make([]byte, l.Header)
	if err := m.Read(hdr, addr); err != nil {
		return Bucket{}, fmt.Errorf("a memory-profile bucket: %w", err)
	}
	v := Value{s: &Struct{Name: "runtime.bucket", Size: l.Header}, b: hdr, Addr: addr}
	b := Bucket{Addr: addr, AllNext: v.U(l.allnext), Size: v.U(l.size)}
	if typ := v.U(l.typ); typ != memProfileBucket {
		return Bucket{}, fmt.Errorf("the bucket at %#x is of type %d, not a memory-profile bucket", addr, typ)
	}
	nstk := v.U(l.nstk)
	if nstk > MaxBucketStack {
		return Bucket{}, fmt.Errorf("the bucket at %#x claims %d frames (at most %d)", addr, nstk, MaxBucketStack)
	}
	body := make([]byte, nstk*8+uint64(l.Record))
	if err := m.Read(body, addr+uint64(l.Header)); err != nil {
		return Bucket{}, fmt.Errorf("the stack and counts of the bucket at %#x: %w", addr, err)
	}
	b.Stack = make([]uint64, nstk)
	for i := range b.Stack {
		b.Stack[i] = binary.LittleEndian.Uint64(body[i*8:])
	}
	rec := body[nstk*8:]
	b.Active = l.cycleAt(rec[l.active:], b.Size)
	for i := range b.Future {
		b.Future[i] = l.cycleAt(rec[l.future+int64(i)*l.cycle:], b.Size)
	}
	return b, nil
}

// cycleAt decodes one memRecordCycle; where the release keeps no bytes they are the counts
// times the bucket's size, as Go 1.27's runtime computes them.
func (l *BucketLayout) cycleAt(b []byte, size uint64) Cycle {
	word := func(f Field) uint64 {
		if f.Size != 8 || f.Off < 0 || f.Off+8 > int64(len(b)) {
			return 0
		}
		return binary.LittleEndian.Uint64(b[f.Off:])
	}
	c := Cycle{Allocs: word(l.allocs), Frees: word(l.frees)}
	if l.hasBytes {
		c.AllocBytes, c.FreeBytes = word(l.allocBytes), word(l.freeBytes)
	} else {
		c.AllocBytes, c.FreeBytes = c.Allocs*size, c.Frees*size
	}
	return c
}
