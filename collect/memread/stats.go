package memread

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"

	"github.com/memdoctor/memdoctor/process"
	"github.com/memdoctor/memdoctor/session"
)

// Source is the session.GoMem.Source of the figures read from a process's memory.
const Source = "process-memory"

// fieldSet resolves a struct's fields by path, once.
type fieldSet struct {
	s   *process.Struct
	f   map[string]process.Field
	err error
}

func newFieldSet(bi *proc.BinaryInfo, name string, paths ...string) *fieldSet {
	fs := &fieldSet{f: map[string]process.Field{}}
	fs.s, fs.err = process.StructOf(bi, name)
	for _, p := range paths {
		if fs.err != nil {
			break
		}
		var f process.Field
		if f, fs.err = fs.s.Field(p); fs.err == nil {
			fs.f[p] = f
		}
	}
	return fs
}

// statsLayout is where the runtime keeps the figures runtime/metrics reports.
type statsLayout struct {
	mstats, ctrl, cpu, delta *fieldSet
	cpuOff                   int64 // offset of cpuStats in runtime.work
	stats                    int64 // offset of heapStats.stats in runtime.mstats
	classes                  int   // size classes in heapStatsDelta's per-class counts
	smallAlloc               int64 // offset of heapStatsDelta.smallAllocCount
}

var (
	mstatsFields = []string{"heapStats.gen.value", "stacks_sys", "mspan_sys", "mcache_sys", "buckhash_sys", "gcMiscSys", "other_sys",
		"pause_total_ns", "numgc", "numforcedgc", "gc_cpu_fraction"}
	ctrlFields = []string{"gcPercent.value", "memoryLimit.value", "heapMarked", "heapScan.value", "lastStackScan.value", "globalsScan.value",
		"gcPercentHeapGoal.value", "sweepDistMinTrigger.value", "triggered", "heapInUse", "heapFree", "heapReleased",
		"totalAlloc.value", "totalFree.value", "mappedReady.value"}
	cpuFields   = []string{"GCAssistTime", "GCIdleTime", "GCPauseTime", "GCTotalTime", "TotalTime"}
	deltaFields = []string{"inStacks", "inWorkBufs", "largeAllocCount", "tinyAllocCount"}
)

func newStatsLayout(bi *proc.BinaryInfo) (*statsLayout, error) {
	l := &statsLayout{
		mstats: newFieldSet(bi, "runtime.mstats", mstatsFields...),
		ctrl:   newFieldSet(bi, "runtime.gcControllerState", ctrlFields...),
		cpu:    newFieldSet(bi, "runtime.cpuStats", cpuFields...),
		delta:  newFieldSet(bi, "runtime.heapStatsDelta", deltaFields...),
	}
	for _, fs := range []*fieldSet{l.mstats, l.ctrl, l.cpu, l.delta} {
		if fs.err != nil {
			return nil, fs.err
		}
	}
	work, err := process.StructOf(bi, "runtime.workType")
	if err != nil {
		return nil, err
	}
	if l.cpuOff, err = work.Off("cpuStats"); err != nil {
		return nil, err
	}
	if l.stats, err = l.mstats.s.Off("heapStats.stats"); err != nil {
		return nil, err
	}
	if l.smallAlloc, err = l.delta.s.Off("smallAllocCount"); err != nil {
		return nil, err
	}
	t, err := l.delta.s.FieldType("smallAllocCount")
	if err != nil {
		return nil, err
	}
	if at, ok := godwarf.ResolveTypedef(t).(*godwarf.ArrayType); ok && at.Count > 0 && at.Count < 1024 {
		l.classes = int(at.Count)
	} else {
		return nil, fmt.Errorf("runtime.heapStatsDelta.smallAllocCount is not an array of size classes")
	}
	if l.smallAlloc+int64(l.classes)*8 > l.delta.s.Size || 3*l.delta.s.Size+l.stats > l.mstats.s.Size {
		return nil, fmt.Errorf("runtime.heapStatsDelta's layout does not fit in runtime.mstats")
	}
	return l, nil
}

// Stats reads the runtime's memory statistics, GC figures and goroutine count, mapped onto
// what a session records from runtime/metrics. The process runs all along; each structure is
// read in one piece, and the consistent heap statistics again while a reader of the
// runtime's was rotating them.
func (r *Reader) Stats() (*session.GoMem, error) {
	l := r.st
	ms, err := r.readMstats()
	if err != nil {
		return nil, err
	}
	cv, err := l.ctrl.s.Read(r.mem, r.sym[symController].Addr)
	if err != nil {
		return nil, fmt.Errorf("runtime.gcController: %w", err)
	}
	cpuBuf := make([]byte, l.cpu.s.Size)
	if err := r.mem.Read(cpuBuf, r.sym[symWork].Addr+uint64(l.cpuOff)); err != nil {
		return nil, fmt.Errorf("runtime.work.cpuStats: %w", err)
	}
	cpu := func(name string) float64 {
		f := l.cpu.f[name]
		if f.Off+8 > int64(len(cpuBuf)) {
			return 0
		}
		return float64(int64(binary.LittleEndian.Uint64(cpuBuf[f.Off:]))) / 1e9
	}
	c := func(name string) uint64 { return cv.U(l.ctrl.f[name]) }
	m := func(name string) uint64 { return ms.v.U(l.mstats.f[name]) }

	heapInUse, heapFree, released := c("heapInUse"), c("heapFree"), c("heapReleased")
	objects := sub(c("totalAlloc.value"), c("totalFree.value"))
	g := &session.GoMem{
		Source:            Source,
		HeapObjectsBytes:  objects,
		HeapUnusedBytes:   sub(heapInUse, objects),
		HeapFreeBytes:     heapFree,
		HeapReleasedBytes: released,
		HeapStacksBytes:   ms.inStacks,
		OSStacksBytes:     m("stacks_sys"),
		MetadataBytes:     m("mspan_sys") + m("mcache_sys") + m("gcMiscSys") + ms.inWorkBufs,
		OtherBytes:        m("buckhash_sys") + m("other_sys"),
		HeapLiveBytes:     c("heapMarked"),
		HeapGoalBytes:     heapGoal(r.goalInputs(cv, objects)),
		StackScanBytes:    c("lastStackScan.value"),
		GlobalsScanBytes:  c("globalsScan.value"),
		AllocBytesTotal:   c("totalAlloc.value"),
		AllocObjectsTotal: ms.allocs,
		GCCycles:          uint64(uint32(m("numgc"))),
		GCForcedCycles:    uint64(uint32(m("numforcedgc"))),
		GCTotalSeconds:    cpu("GCTotalTime"),
		GCAssistSeconds:   cpu("GCAssistTime"),
		GCIdleSeconds:     cpu("GCIdleTime"),
		GCPauseSeconds:    cpu("GCPauseTime"),
		CPUTotalSeconds:   cpu("TotalTime"),
		GCCPUFraction:     math.Float64frombits(m("gc_cpu_fraction")),
		PauseTotalSeconds: float64(m("pause_total_ns")) / 1e9,
		GOGC:              gogc(int32(uint32(c("gcPercent.value")))),
		GOMemLimitBytes:   c("memoryLimit.value"),
	}
	g.TotalBytes = heapInUse + heapFree + released + g.HeapStacksBytes + g.OSStacksBytes + m("mspan_sys") + m("mcache_sys") +
		m("buckhash_sys") + m("gcMiscSys") + m("other_sys") + ms.inWorkBufs
	if n, err := r.gomaxprocs(); err == nil {
		g.GOMAXPROCS = n
	}
	if n, err := r.Goroutines(); err == nil {
		g.Goroutines = n
	}
	return g, nil
}

func gogc(pct int32) int {
	if pct < 0 {
		return -1
	}
	return int(pct)
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// mstatsReading is one reading of runtime.memstats and the sums of its consistent heap
// statistics' three shards.
type mstatsReading struct {
	v                    process.Value
	inStacks, inWorkBufs uint64
	allocs               uint64 // heap objects allocated: large + every size class
}

// readMstats reads runtime.memstats whole, again when its heap statistics' generation changed
// during the read (a reader of the runtime's was merging the shards: a sum would count a
// shard twice or miss it).
func (r *Reader) readMstats() (mstatsReading, error) {
	l := r.st
	addr := r.sym[symMemstats].Addr
	gen := l.mstats.f["heapStats.gen.value"]
	var out mstatsReading
	for i := 0; ; i++ {
		v, err := l.mstats.s.Read(r.mem, addr)
		if err != nil {
			return out, fmt.Errorf("runtime.memstats: %w", err)
		}
		again, err := r.mem.Uint32(addr + uint64(gen.Off))
		if err != nil {
			return out, fmt.Errorf("runtime.memstats: %w", err)
		}
		out.v = v
		if uint64(again) == v.U(gen) || i+1 >= tries {
			break
		}
	}
	raw := out.v.Bytes()
	size := l.delta.s.Size
	for shard := int64(0); shard < 3; shard++ {
		d := raw[l.stats+shard*size : l.stats+(shard+1)*size]
		word := func(off int64) uint64 { return binary.LittleEndian.Uint64(d[off:]) }
		out.inStacks += word(l.delta.f["inStacks"].Off)
		out.inWorkBufs += word(l.delta.f["inWorkBufs"].Off)
		out.allocs += word(l.delta.f["largeAllocCount"].Off)
		for c := 0; c < l.classes; c++ {
			out.allocs += word(l.smallAlloc + int64(c)*8)
		}
	}
	return out, nil
}

// gomaxprocs reads runtime.gomaxprocs.
func (r *Reader) gomaxprocs() (int, error) {
	v, err := r.mem.Uint32(r.sym[symGomaxprocs].Addr)
	if err != nil {
		return 0, err
	}
	if v == 0 || v > 1<<20 {
		return 0, fmt.Errorf("runtime.gomaxprocs reads %d", v)
	}
	return int(v), nil
}
