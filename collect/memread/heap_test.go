package memread

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/memdoctor/memdoctor/process"
)

// mprof is the runtime's heap-profile protocol (src/runtime/mprof.go, Go 1.26 and 1.27) for
// a few buckets, step by step: what memdoctor reads, and what runtime.MemProfile reports.
type mprof struct {
	cycle   uint32 // mProfCycle: cycle << 1 | flushed
	buckets []mrec
	swept   bool // mProf_PostSweep ran this cycle: the sweep, and so its frees, are done
}

type mrec struct {
	active process.Cycle
	future [3]process.Cycle
}

func one(n uint64) process.Cycle { return process.Cycle{Allocs: n, AllocBytes: 64 * n} }

func (m *mprof) malloc(b int) { m.buckets[b].future[((m.cycle>>1)+2)%3].Add(one(1)) }

func (m *mprof) free(b int) {
	m.buckets[b].future[((m.cycle>>1)+1)%3].Add(process.Cycle{Frees: 1, FreeBytes: 64})
}

func (m *mprof) flushIndex(i uint32) {
	for k := range m.buckets {
		m.buckets[k].active.Add(m.buckets[k].future[i])
		m.buckets[k].future[i] = process.Cycle{}
	}
}

// nextCycle is mProf_NextCycle and mProf_Flush, as a GC's mark termination makes them.
func (m *mprof) nextCycle() {
	c := ((m.cycle >> 1) + 1) % mProfCycleWrap
	m.cycle = c<<1 | 1
	m.swept = false
	m.flushIndex(c % 3)
}

// postSweep is mProf_PostSweep (runtime.GC only).
func (m *mprof) postSweep() {
	m.swept = true
	m.flushIndex(((m.cycle >> 1) + 1) % 3)
}

func (m *mprof) nothingPublished() bool {
	for _, b := range m.buckets {
		if b.active.Allocs != 0 || b.active.Frees != 0 || b.future[(m.cycle>>1)%3].Allocs != 0 || b.future[(m.cycle>>1)%3].Frees != 0 {
			return false
		}
	}
	return true
}

func (m *mprof) clone() *mprof {
	return &mprof{cycle: m.cycle, swept: m.swept, buckets: append([]mrec(nil), m.buckets...)}
}

// memProfile is runtime.MemProfile's reading, which changes what it reads.
func (m *mprof) memProfile() []process.Cycle {
	clear := m.nothingPublished()
	m.flushIndex((m.cycle >> 1) % 3)
	if clear {
		for i := range 3 {
			m.flushIndex(uint32(i))
		}
	}
	out := make([]process.Cycle, len(m.buckets))
	for k, b := range m.buckets {
		out[k] = b.active
	}
	return out
}

func (m *mprof) walk() *walk {
	w := &walk{cycle: m.cycle}
	for k, b := range m.buckets {
		w.records = append(w.records, record{addr: 0x1000 + uint64(k)*0x100, size: 64, active: b.active, future: b.future})
	}
	return w
}

// TestPublisherIsMemProfile runs the runtime's protocol at random on twin programs: one read
// by the publisher (whose memory nothing but the runtime changes), the other by its own
// runtime.MemProfile at the same points. Each reading must be what runtime.MemProfile reports,
// through the first cycles and GCs with and without runtime.GC's early publication, and never
// less than the reading before. A program may read its own profile too (pprof): where its
// first reading finds nothing published in its memory (memdoctor's moves being its own) it
// publishes every cycle for good, and the twins part; from then on the reading must be what
// that program's runtime.MemProfile reports.
func TestPublisherIsMemProfile(t *testing.T) {
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 1))
		read, twin := &mprof{}, &mprof{}
		if seed%3 == 0 { // a program whose cycle has run for long, near the wrap
			read.cycle = (mProfCycleWrap-2)<<1 | 1
			twin.cycle = read.cycle
		}
		var p publisher
		var trace []string
		live := map[int]int{}
		parted := false
		last := map[int]process.Cycle{}
		for step := range 200 {
			var op string
			switch x := rng.IntN(100); {
			case x < 4 && len(read.buckets) < 8:
				read.buckets = append(read.buckets, mrec{})
				twin.buckets = append(twin.buckets, mrec{})
				op = "bucket"
			case x < 50 && len(read.buckets) > 0:
				b := rng.IntN(len(read.buckets))
				read.malloc(b)
				twin.malloc(b)
				live[b]++
				op = "malloc"
			case x < 60 && len(live) > 0 && !read.swept:
				for b := range live {
					read.free(b)
					twin.free(b)
					if live[b]--; live[b] == 0 {
						delete(live, b)
					}
					break
				}
				op = "free"
			case x < 70:
				read.nextCycle()
				twin.nextCycle()
				op = "gc"
			case x < 73:
				read.postSweep()
				twin.postSweep()
				op = "postsweep"
			case x < 76: // the program reads its own profile
				parted = parted || read.nothingPublished() && !twin.nothingPublished()
				read.memProfile()
				twin.memProfile()
				op = "pprof"
			default:
				w := read.walk()
				p.publish(w)
				want := twin.memProfile()
				if parted {
					want = read.clone().memProfile()
				}
				for k, rec := range w.records {
					v := rec.view
					if v != want[k] || v.Allocs < last[k].Allocs || v.Frees < last[k].Frees {
						t.Fatalf("seed %d step %d: bucket %d read %+v, runtime.MemProfile %+v, the reading before %+v (parted %v)\nafter %s",
							seed, step, k, v, want[k], last[k], parted, strings.Join(trace, " "))
					}
					last[k] = v
				}
				op = "read"
			}
			trace = append(trace, op)
		}
		if len(p.moved) > len(read.buckets) {
			t.Fatalf("seed %d: %d buckets remembered, %d exist", seed, len(p.moved), len(read.buckets))
		}
	}
}

// flushMem is a target's memory that the runtime changes: after mProfCycle has been read
// `after` times, the memory is next.
type flushMem struct {
	mu          sync.Mutex
	b, next     []byte
	after, seen int
}

func (m *flushMem) ReadMemory(buf []byte, addr uint64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if addr == flushCycle && len(buf) == 4 {
		if m.seen++; m.seen > m.after && m.next != nil {
			m.b = m.next
		}
	}
	return bufMem{fuzzBase, m.b}.ReadMemory(buf, addr)
}

// mProfCycleWrap is the runtime's: the heap-profile cycle number wraps there.
const mProfCycleWrap = 3 * (2 << 24)

const (
	flushCycle = fuzzBase      // runtime.mProfCycle
	flushHead  = fuzzBase + 8  // runtime.mbuckets
	flushLock  = fuzzBase + 16 // runtime.profMemActiveLock's word
)

// image lays out m's buckets (Go 1.26's layout: each with a 3-frame stack) after the cycle,
// the list's head and the lock's word.
func image(m *mprof, locked bool) []byte {
	mem := make([]byte, 24)
	next := uint64(0)
	for _, b := range m.buckets {
		var addr uint64
		mem, addr = appendBucket(mem, next, 3, 0, 0)
		rec := mem[len(mem)-128:]
		for j, c := range append([]process.Cycle{b.active}, b.future[:]...) {
			for f, v := range []uint64{c.Allocs, c.Frees, c.AllocBytes, c.FreeBytes} {
				binary.LittleEndian.PutUint64(rec[32*j+8*f:], v)
			}
		}
		next = addr
	}
	binary.LittleEndian.PutUint32(mem[0:], m.cycle)
	binary.LittleEndian.PutUint64(mem[8:], next)
	if locked {
		binary.LittleEndian.PutUint64(mem[16:], 1)
	}
	return mem
}

// TestWalkWaitsForAFlush reads memory that a flush of the published cycle is changing, or is
// about to, as a reader that takes none of the runtime's locks sees it (a flusher the kernel
// descheduled halfway leaves it so): no walk of it is kept; the walk made once the flush is
// done is, with each bucket counted once. A flush that never ends is given up in bounded
// tries.
func TestWalkWaitsForAFlush(t *testing.T) {
	bl := realLayout(t)
	// Three buckets with published counts and counts of cycle 7 to publish.
	before := &mprof{cycle: 6<<1 | 1, buckets: make([]mrec, 3)}
	for k := range before.buckets {
		before.buckets[k].active = one(10)
		before.buckets[k].future[7%3] = one(uint64(k + 1))
		before.buckets[k].future[8%3] = one(100) // counting: allocations of cycle 6
	}
	done := &mprof{cycle: before.cycle, buckets: append([]mrec(nil), before.buckets...)}
	done.nextCycle() // cycle 7: flushed
	want := []uint64{11, 12, 13}

	nextOnly := &mprof{cycle: 7 << 1, buckets: before.buckets} // NextCycle made, Flush not begun
	gap := &mprof{cycle: 7<<1 | 1, buckets: before.buckets}    // the bit set, the lock not yet taken
	half := &mprof{cycle: 7<<1 | 1, buckets: append([]mrec(nil), before.buckets...)}
	half.buckets[0] = done.buckets[0]               // flushed
	half.buckets[1].active = done.buckets[1].active // added, not yet zeroed
	half.buckets[2] = before.buckets[2]             // not yet reached
	for _, tc := range []struct {
		name   string
		first  []byte
		after  int // reads of mProfCycle until the flush is done
		never  bool
		errHas string
	}{
		{name: "flushed", first: image(done, false)},
		{name: "next cycle, flush not begun", first: image(nextOnly, false), after: 2},
		{name: "bit set, lock not yet taken", first: image(gap, false), after: 2},
		{name: "halfway, lock held", first: image(half, true), after: 3},
		{name: "halfway, lock free", first: image(half, false), after: 3},
		{name: "halfway for ever", first: image(half, true), never: true, errHas: "publishing a heap-profile cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &flushMem{b: tc.first, after: tc.after}
			if !tc.never {
				m.next = image(done, false)
			}
			r := &Reader{mem: process.NewMemory(m), bl: bl, profLock: flushLock,
				sym: map[string]process.Symbol{symCycle: {Addr: flushCycle}, symBuckets: {Addr: flushHead}}}
			w, retries, err := r.readBuckets()
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || m.seen > 2*flushTries {
					t.Fatalf("a flush that never ends: %v after %d reads of the cycle", err, m.seen)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r.pub.publish(w)
			if len(w.records) != 3 || w.cycle != done.cycle {
				t.Fatalf("%d records at cycle %d|%d", len(w.records), w.cycle>>1, w.cycle&1)
			}
			// The list is read from its head: the last bucket laid out first.
			for k, rec := range w.records {
				if got := rec.view.Allocs; got != want[2-k] || rec.view.AllocBytes != 64*got {
					t.Errorf("bucket %d: %+v published, want %d allocations (after %d retries)", k, rec.view, want[2-k], retries)
				}
			}
			if tc.after > 0 && retries == 0 {
				t.Errorf("the walk of a flush in progress was kept")
			}
		})
	}
	// A core taken halfway through the flush: memory that will not change is read at once, and
	// the reading says what it cannot tell.
	r := &Reader{mem: process.NewMemory(bufMem{fuzzBase, image(half, true)}), bl: bl, profLock: flushLock, static: true,
		sym: map[string]process.Symbol{symCycle: {Addr: flushCycle}, symBuckets: {Addr: flushHead}}}
	w, retries, err := r.readBuckets()
	if err != nil || retries != 0 || len(w.records) != 3 || len(w.notes) != 1 || !strings.Contains(w.notes[0], "counted in part or twice") {
		t.Errorf("a core taken halfway through a flush: %v, %d retries, %+v", err, retries, w)
	}
}
