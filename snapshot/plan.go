package snapshot

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/memdoctor/memdoctor/process"
)

// planner finds what the walk will read, through a reader of the target's memory: the
// running process's (to estimate the stop), the stopped process's, or the copy's.
type planner struct {
	l *layout
	t *process.Target
	m process.Reader
	// refreshes is how many times more the process's memory map may be read again for a range
	// outside it: while the process runs (the estimate), the runtime maps memory as it goes,
	// after the map was read; stopped, the map is the one its memory is read under (0).
	refreshes int
}

// readable says whether [lo, lo+n) is in the process's readable memory, reading its memory
// map again (while refreshes last) when it is not.
func (p *planner) readable(lo, n uint64) bool {
	for {
		if p.t.Readable(lo, n) {
			return true
		}
		if p.refreshes <= 0 {
			return false
		}
		p.refreshes--
		if p.t.ReadRegions() != nil {
			return false
		}
	}
}

// Bounds on what a hostile target's tables can make a snapshot list.
const (
	maxSpans      = 1 << 29 // one per heap page of a 4 TiB heap
	maxChunks     = 1 << 20 // 256 GiB of the runtime's persistent allocations
	maxGoroutines = process.MaxRead / 8
	maxMs         = 1 << 20
	maxStack      = 1 << 30 // the runtime's own limit on a goroutine's stack
)

// Around each stopped thread: below its stack pointer, what its innermost frame may keep
// under it (amd64's red zone, and some); above it, at most this much of a stack that is
// neither a goroutine's nor a thread's known g0 or signal stack (a C thread's); around its
// thread pointer, where the runtime and C keep their thread-local variables.
const (
	belowSP    = 512
	aboveSP    = 1 << 20
	belowTLS   = 4096
	aboveTLS   = 512
	spanBuffer = 4096 // allspans entries read at once
)

// readableWithin clips [lo, hi) to the readable region holding lo.
func (p *planner) readableWithin(lo, hi uint64) (process.Region, bool) {
	r, ok := p.t.RegionOf(lo)
	if !ok {
		return process.Region{}, false
	}
	return process.Region{Lo: lo, Hi: min(hi, r.Hi)}, true
}

// word reads one word.
func (p *planner) word(addr uint64) (uint64, error) {
	var b [8]byte
	if err := p.m.Read(b[:], addr); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// slice reads a slice header (pointer, length).
func (p *planner) slice(addr uint64) (ptr, n uint64, err error) {
	var b [16]byte
	if err := p.m.Read(b[:], addr); err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:]), nil
}

// spanTable is mheap_.allspans: every span the heap ever made, whatever its state.
func (p *planner) spanTable() (process.Region, uint64, error) {
	ptr, n, err := p.slice(p.l.allspans)
	if err != nil {
		return process.Region{}, 0, fmt.Errorf("mheap_.allspans: %w", err)
	}
	if n > maxSpans || n > p.t.ReadableBytes()/p.l.pageSize {
		return process.Region{}, 0, fmt.Errorf("mheap_.allspans claims %d spans, more than the memory that can be read holds", n)
	}
	if n == 0 {
		return process.Region{}, 0, nil
	}
	if !p.readable(ptr, n*8) {
		return process.Region{}, 0, fmt.Errorf("mheap_.allspans (%d spans at %#x) is not in readable memory", n, ptr)
	}
	return process.Region{Lo: ptr, Hi: ptr + n*8}, n, nil
}

// chunks lists the runtime's persistent allocations: the chunks that hold its spans'
// records, their specials (finalizers, cleanups, profile records), the heap profile's
// buckets, itabs, the finalizer and cleanup queues' blocks and the other metadata the runtime
// allocates for ever. Each chunk's first word links the next.
func (p *planner) chunks() ([]process.Region, error) {
	c, err := p.word(p.l.persistentChunks)
	if err != nil {
		return nil, fmt.Errorf("runtime.persistentChunks: %w", err)
	}
	seen := map[uint64]bool{}
	var out []process.Region
	for c != 0 {
		if len(out) >= maxChunks || seen[c] {
			return nil, fmt.Errorf("the runtime's list of persistent chunks loops or is longer than %d", maxChunks)
		}
		seen[c] = true
		if !p.readable(c, p.l.chunkSize) {
			return nil, fmt.Errorf("a persistent chunk of the runtime at %#x is not in readable memory", c)
		}
		out = append(out, process.Region{Lo: c, Hi: c + p.l.chunkSize})
		if c, err = p.word(c); err != nil {
			return nil, fmt.Errorf("a persistent chunk of the runtime: %w", err)
		}
	}
	return out, nil
}

// heapSpans is the memory of the heap's in-use spans, merged where they touch: those whose
// objects may hold pointers (scan), which the walk reads, and those whose objects hold none
// (noscan), whose bytes nothing the walk or its naming needs.
type heapSpans struct {
	scan, noscan      []process.Region
	count, unreadable int // spans; spans whose memory cannot be read (left out, as the walk leaves them out)
}

func (p *planner) inUse(table process.Region, n uint64) (heapSpans, error) {
	var hs heapSpans
	buf := make([]byte, spanBuffer*8)
	rec := make([]byte, p.l.span.size)
	v := make([]uint64, 4)
	for i := uint64(0); i < n; i += spanBuffer {
		k := min(spanBuffer, n-i)
		if err := p.m.Read(buf[:k*8], table.Lo+i*8); err != nil {
			return hs, fmt.Errorf("mheap_.allspans: %w", err)
		}
		for j := uint64(0); j < k; j++ {
			addr := binary.LittleEndian.Uint64(buf[j*8:])
			if addr == 0 {
				continue
			}
			if err := p.l.span.read(p.m, addr, rec, v); err != nil {
				return hs, fmt.Errorf("an mspan: %w", err)
			}
			if v[0] != p.l.spanInUse {
				continue
			}
			base, size := v[1], v[2]*p.l.pageSize
			if size == 0 || base%p.l.pageSize != 0 || size > 1<<40 || base+size < base {
				return hs, fmt.Errorf("mspan at %#x: base %#x, %d bytes: not a heap span", addr, base, size)
			}
			if !p.readable(base, size) {
				hs.unreadable++
				continue
			}
			hs.count++
			r := process.Region{Lo: base, Hi: base + size}
			if v[3]&1 != 0 { // spanClass's noscan bit
				hs.noscan = append(hs.noscan, r)
			} else {
				hs.scan = append(hs.scan, r)
			}
		}
	}
	hs.scan, hs.noscan = mergeRegions(hs.scan), mergeRegions(hs.noscan)
	return hs, nil
}

// stack is one stack a goroutine or a thread runs on.
type stack struct{ lo, hi uint64 }

// goroutines lists the stacks of the goroutines that are not dead (runtime.allgs).
func (p *planner) goroutines() ([]stack, error) {
	ptr, n, err := p.slice(p.l.allgs)
	if err != nil {
		return nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	if n > maxGoroutines {
		return nil, fmt.Errorf("runtime.allgs claims %d goroutines, more than memdoctor reads (%d)", n, maxGoroutines)
	}
	raw := make([]byte, 8*n)
	if err := p.m.Read(raw, ptr); err != nil {
		return nil, fmt.Errorf("runtime.allgs: %w", err)
	}
	rec := make([]byte, p.l.g.size)
	v := make([]uint64, 3)
	var out []stack
	for i := uint64(0); i < n; i++ {
		ga := binary.LittleEndian.Uint64(raw[i*8:])
		if err := p.l.g.read(p.m, ga, rec, v); err != nil {
			return nil, fmt.Errorf("goroutine %d of runtime.allgs: %w", i, err)
		}
		status, lo, hi := v[0]&^0x1000, v[1], v[2] // without _Gscan
		if status == p.l.gDead || hi <= lo || hi-lo > maxStack {
			continue
		}
		out = append(out, stack{lo, hi})
	}
	return out, nil
}

// systemStacks lists the g0 and signal stacks of every thread the runtime made (runtime.allm).
func (p *planner) systemStacks() ([]stack, error) {
	m, err := p.word(p.l.allm)
	if err != nil {
		return nil, fmt.Errorf("runtime.allm: %w", err)
	}
	rec := make([]byte, max(p.l.m.size, p.l.gStack.size))
	mv, gv := make([]uint64, 3), make([]uint64, 2)
	seen := map[uint64]bool{}
	var out []stack
	for m != 0 {
		if len(seen) >= maxMs || seen[m] {
			return nil, fmt.Errorf("runtime.allm loops or lists more than %d threads", maxMs)
		}
		seen[m] = true
		if err := p.l.m.read(p.m, m, rec, mv); err != nil {
			return nil, fmt.Errorf("an m of runtime.allm: %w", err)
		}
		for _, g := range mv[:2] {
			if g == 0 {
				continue
			}
			if err := p.l.gStack.read(p.m, g, rec, gv); err != nil {
				return nil, fmt.Errorf("a thread's g0 or signal goroutine: %w", err)
			}
			if gv[0] < gv[1] && gv[1]-gv[0] <= maxStack {
				out = append(out, stack{gv[0], gv[1]})
			}
		}
		m = mv[2]
	}
	return out, nil
}

// stackRegions is the memory of the goroutines' stacks, whole (the walk scans a stack whose
// frames it cannot unwind word by word), as far as the memory map says it can be read; and
// the parts it says cannot be (a page a program made inaccessible), which the walk goes
// around.
func (p *planner) stackRegions(gs []stack) (readable, unreadable []process.Region) {
	for _, s := range gs {
		for lo := s.lo; lo < s.hi; {
			if r, ok := p.readableWithin(lo, s.hi); ok {
				readable = append(readable, r)
				lo = r.Hi
				continue
			}
			hi := s.hi
			if r, ok := p.t.NextRegion(lo); ok && r.Lo < hi {
				hi = r.Lo
			}
			unreadable = append(unreadable, process.Region{Lo: lo, Hi: hi})
			lo = hi
		}
	}
	return readable, unreadable
}

// threadRegions is what each stopped thread's frames and thread-local variables need: its
// stack from just below its stack pointer up to the top of the stack it is on (a goroutine's
// is already whole; a g0 or signal stack's top is known; another stack's is at most aboveSP
// further), and the memory around its thread pointer.
func (p *planner) threadRegions(gs, sys []stack) []process.Region {
	in := func(ss []stack, a uint64) (stack, bool) {
		for _, s := range ss {
			if a >= s.lo && a < s.hi {
				return s, true
			}
		}
		return stack{}, false
	}
	var out []process.Region
	add := func(lo, hi uint64) {
		if r, ok := p.readableWithin(lo, hi); ok && r.Hi > r.Lo {
			out = append(out, r)
		}
	}
	for _, th := range p.t.Threads() {
		if sp := th.SP; sp != 0 {
			if _, ok := in(gs, sp); !ok {
				lo := max(sp, belowSP) - belowSP
				if s, ok := in(sys, sp); ok {
					add(max(lo, s.lo), s.hi)
				} else if r, ok := p.t.RegionOf(sp); ok {
					add(max(lo, r.Lo), sp+aboveSP)
				}
			}
		}
		if tls := th.TLS; tls != 0 {
			if r, ok := p.t.RegionOf(tls); ok {
				add(max(max(tls, belowTLS)-belowTLS, r.Lo), tls+aboveTLS)
			}
		}
	}
	return out
}

// mergeRegions sorts regions and merges those that overlap or touch.
func mergeRegions(rs []process.Region) []process.Region {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Lo < rs[j].Lo })
	var out []process.Region
	for _, r := range rs {
		if r.Hi <= r.Lo {
			continue
		}
		if n := len(out); n > 0 && r.Lo <= out[n-1].Hi {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

func bytesOf(rs []process.Region) uint64 {
	var n uint64
	for _, r := range rs {
		n += r.Hi - r.Lo
	}
	return n
}
