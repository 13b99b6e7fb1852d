package leaktest

import (
	"runtime"
)

// heapRecord is one allocation stack of the heap profile: what it allocated and what of it is
// still in use.
type heapRecord struct {
	inUseBytes, inUseObjects int64
	allocBytes, allocObjects int64
}

// heapProfile reads the process's heap profile as of the last garbage collection, by stack.
// With every allocation sampled (MemProfileRate 1), its counts are the allocations
// themselves. Its stacks are runtime.MemProfile's: the innermost 32 frames.
func heapProfile() map[[32]uintptr]heapRecord {
	defer unprofiled()()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+n/4+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			break
		}
	}
	out := make(map[[32]uintptr]heapRecord, n)
	for _, r := range recs[:n] {
		old := out[r.Stack0]
		out[r.Stack0] = heapRecord{
			inUseBytes:   old.inUseBytes + r.InUseBytes(),
			inUseObjects: old.inUseObjects + r.InUseObjects(),
			allocBytes:   old.allocBytes + r.AllocBytes,
			allocObjects: old.allocObjects + r.AllocObjects,
		}
	}
	return out
}

// unprofiled lowers the heap profile's sampling from every allocation to the runtime's
// default while Loop does its own work (reading profiles, dumping goroutines), and returns
// what puts it back: its own allocations would cost a profiled allocation each and show in
// the profile.
func unprofiled() func() {
	rate := runtime.MemProfileRate
	if rate != 1 {
		return func() {}
	}
	runtime.MemProfileRate = 512 << 10
	return func() { runtime.MemProfileRate = rate }
}

// heapDelta is one stack's change between two profiles.
type heapDelta struct {
	stack                    []uintptr
	inUseBytes, inUseObjects int64 // grown (or shrunk, below zero)
	allocBytes, allocObjects int64 // allocated in between
}

// diffHeap returns, for every stack that allocated between the two profiles or whose in-use
// memory changed, the change.
func diffHeap(before, after map[[32]uintptr]heapRecord) []heapDelta {
	var out []heapDelta
	for k, a := range after {
		b := before[k]
		d := heapDelta{
			inUseBytes:   a.inUseBytes - b.inUseBytes,
			inUseObjects: a.inUseObjects - b.inUseObjects,
			allocBytes:   a.allocBytes - b.allocBytes,
			allocObjects: a.allocObjects - b.allocObjects,
		}
		if d.inUseBytes == 0 && d.allocObjects == 0 {
			continue
		}
		rec := runtime.MemProfileRecord{Stack0: k}
		d.stack = rec.Stack()
		out = append(out, d)
	}
	return out
}
