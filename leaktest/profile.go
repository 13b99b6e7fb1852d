package leaktest

import (
	"bufio"
	"bytes"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
)

// heapRecord is one allocation stack of the heap profile: what it allocated and what of it is
// still in use.
type heapRecord struct {
	inUseBytes, inUseObjects int64
	allocBytes, allocObjects int64
	stack                    string // the program counters, as the profile's text writes them
}

// heapProfile reads the process's heap profile as of the last garbage collection, by stack.
// It reads the text form (debug=1) of runtime/pprof's heap profile, whose stacks are as deep
// as the runtime records them (runtime.MemProfile's records stop at 32 frames), and whose
// counts, with every allocation sampled, are the allocations themselves.
//
// While it reads, the profile samples allocations at the runtime's default rate again, so
// that reading it neither costs a profiled allocation per allocation nor shows in it much.
func heapProfile() (map[string]heapRecord, error) {
	defer unprofiled()()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		return nil, err
	}
	return parseHeapProfile(&buf), nil
}

// parseHeapProfile reads the record lines "inuse_objects: inuse_bytes [alloc_objects:
// alloc_bytes] @ 0x1 0x2 ..." of a heap profile's text form; the other lines are skipped.
func parseHeapProfile(buf *bytes.Buffer) map[string]heapRecord {
	out := map[string]heapRecord{}
	sc := bufio.NewScanner(buf)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] < '0' || l[0] > '9' {
			continue
		}
		counts, stack, ok := strings.Cut(l, " @ ")
		if !ok {
			continue
		}
		var r heapRecord
		f := strings.FieldsFunc(counts, func(r rune) bool { return r == ':' || r == ' ' || r == '[' || r == ']' })
		if len(f) != 4 {
			continue
		}
		nums := make([]int64, 4)
		bad := false
		for i, s := range f {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				bad = true
			}
			nums[i] = n
		}
		if bad {
			continue
		}
		r.inUseObjects, r.inUseBytes, r.allocObjects, r.allocBytes = nums[0], nums[1], nums[2], nums[3]
		r.stack = strings.TrimSpace(stack)
		old := out[r.stack]
		r.inUseObjects += old.inUseObjects
		r.inUseBytes += old.inUseBytes
		r.allocObjects += old.allocObjects
		r.allocBytes += old.allocBytes
		out[r.stack] = r
	}
	return out
}

// pcs reads a record's program counters.
func (r heapRecord) pcs() []uintptr {
	var out []uintptr
	for _, s := range strings.Fields(r.stack) {
		n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if err == nil {
			out = append(out, uintptr(n))
		}
	}
	return out
}

// heapDelta is one stack's change between two profiles.
type heapDelta struct {
	stack                    []uintptr
	inUseBytes, inUseObjects int64 // grown (or shrunk, below zero)
	allocBytes, allocObjects int64 // allocated in between
}

// diffHeap returns, for every stack that allocated between the two profiles or whose in-use
// memory changed, the change.
func diffHeap(before, after map[string]heapRecord) []heapDelta {
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
		d.stack = a.pcs()
		out = append(out, d)
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
