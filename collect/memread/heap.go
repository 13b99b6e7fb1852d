package memread

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/process"
)

// MaxBuckets bounds the buckets one reading takes: a list longer than this (or one that
// loops, in corrupt memory) is cut there, with a note.
const MaxBuckets = 1 << 17

// tries is how often a reading that raced the runtime is made again before it is given up
// (the whole walk) or left out (one bucket).
const tries = 3

// flushTries is how often a reading waits for the runtime to finish publishing a cycle
// (flushPause more each time) before it is given up; see readBuckets.
const (
	flushTries = 5
	flushPause = time.Millisecond
)

// cacheBytes is the memory a reading keeps of the target's buckets while it walks them.
const cacheBytes = 1 << 20

// mProfCycleWrap is the runtime's: the heap-profile cycle number wraps there (a multiple of
// the three future cycles, so that cycle%3 goes on across the wrap).
const mProfCycleWrap = 3 * (2 << 24)

// record is one bucket as read: its stack, its counts, and what runtime.MemProfile would
// report for it (set by publish).
type record struct {
	addr   uint64
	size   uint64
	stack  []uint64
	active process.Cycle
	future [3]process.Cycle
	view   process.Cycle // what the heap profile shows
}

// walk is one pass over the bucket list.
type walk struct {
	records []record
	// cycle is runtime.mProfCycle as read before and after the walk: the heap-profile cycle
	// number times 2, plus 1 once mProf_Flush began to publish it.
	cycle   uint32
	pending int      // buckets that still hold counts of the cycle being published
	skipped int      // buckets left out: unreadable, or their counts torn on every try
	notes   []string // why
	cut     bool     // the list was longer than MaxBuckets
}

// HeapReading is one reading of the heap profile.
type HeapReading struct {
	Records int           // buckets in the profile
	Skipped int           // buckets left out (see Notes)
	Rate    int64         // runtime.MemProfileRate when read; 0: sampling is off
	Retries int           // walks made again because a GC was publishing a cycle meanwhile
	Took    time.Duration // the reading's wall time (the target runs all along)
	Bytes   int64         // bytes read from the target
	Notes   []string
}

// How the runtime publishes its heap profile (src/runtime/mprof.go, the same in Go 1.26 and
// 1.27), and what memdoctor, which takes none of its locks, can see of it.
//
// Each bucket counts allocations in future[(C+2)%3] and sweep frees in future[(C+1)%3], C
// being the heap-profile cycle (mProfCycle >> 1), and what is published in active. At a GC's
// mark termination mProf_NextCycle makes C+1 current and clears mProfCycle's flushed bit;
// just after, mProf_Flush sets the bit and then, holding profMemActiveLock, walks every
// bucket adding future[C%3] to active and zeroing it: it must, before the next NextCycle.
// runtime.MemProfile makes the same flush of future[C%3] (a no-op once mProf_Flush has made
// it, the bit left alone) and reports active; mProf_PostSweep (runtime.GC only) flushes
// future[(C+1)%3] early. So what runtime.MemProfile would report for a bucket is
// active + future[C%3], a sum no flush of C%3 changes, and which only grows.
//
// A reader without the locks sees a flush of future[C%3] as a tear: active read before the
// add and future[C%3] after the zeroing loses the cycle's counts; active after and future
// before counts them twice, and a flusher the kernel took off its CPU between the two stores
// leaves a bucket in that state for as long as it is descheduled. Such a flush can only run
// from mProf_NextCycle until mProf_Flush has zeroed future[C%3] in every bucket, and the
// whole flush holds profMemActiveLock. So a walk is kept only when
//   - mProfCycle reads the same before and after it (no NextCycle, no flush began),
//   - the flushed bit is set (cycle 0 aside: no GC has run, nothing is flushed but by
//     runtime.MemProfile's own reading),
//   - profMemActiveLock was free before and after it (runtime.MemProfile, mProf_PostSweep or
//     a flush holds it), and
//   - no bucket still held counts in future[C%3]: were any, mProf_Flush had not passed it.
// A flush that tore a bucket ran during the walk: it began after the bit was read set and
// after the lock was read free, so its flusher stopped between setting the bit and taking the
// lock (a few instructions) for longer than a read of the target's memory, and then either
// still holds the lock after the walk or has zeroed future[C%3] in a bucket the walk read
// after it; a torn bucket itself shows its future[C%3] unless the add was read late. What is
// left is a flusher descheduled in those few instructions and then racing ahead of the walk.
// A walk that fails the checks is made again after a pause (mProf_Flush ends within
// microseconds of NextCycle on a running program), at most flushTries times.
//
// The extra cost: two 8-byte reads of the lock per walk; a walk made again when a GC was
// publishing a cycle.

// readBuckets walks the bucket list from its head, read once: new buckets are published at
// the head and a bucket's links never change, so the walk sees every bucket that existed when
// it began. It keeps only a walk that no publication of a heap-profile cycle overlapped (see
// above): a walk that one did is made again, so that no profile mixes two cycles or a
// cycle's counts half moved.
func (r *Reader) readBuckets() (*walk, int, error) {
	cycleAddr, headAddr := r.sym[symCycle].Addr, r.sym[symBuckets].Addr
	moved, busy := 0, 0
	for retry := 0; ; retry++ {
		if busy > 0 {
			time.Sleep(time.Duration(busy) * flushPause)
		}
		w, changed, err := r.walkOnce(cycleAddr, headAddr)
		switch {
		case err != nil:
			return nil, retry, err
		case w != nil:
			return w, retry, nil
		case changed:
			if moved++; moved >= tries {
				return nil, retry, fmt.Errorf("a GC published a heap-profile cycle during each of %d readings of the buckets: try again", tries)
			}
		default:
			if busy++; busy >= flushTries {
				return nil, retry, fmt.Errorf("the runtime was publishing a heap-profile cycle on each of %d tries to read its buckets: try again", flushTries)
			}
		}
	}
}

// walkOnce makes one walk, and keeps it if no publication overlapped it: otherwise it returns
// no walk, and whether mProfCycle changed during it (else the runtime was, or may have been,
// publishing when it was read: the walk is not even made when that shows before it).
func (r *Reader) walkOnce(cycleAddr, headAddr uint64) (w *walk, changed bool, err error) {
	c0, err := r.mem.Uint32(cycleAddr)
	if err != nil {
		return nil, false, fmt.Errorf("runtime.mProfCycle: %w", err)
	}
	held, err := r.profLockHeld()
	if err != nil || held || (c0&1 == 0 && c0 != 0) {
		return nil, false, err
	}
	head, err := r.mem.Uint64(headAddr)
	if err != nil {
		return nil, false, fmt.Errorf("runtime.mbuckets: %w", err)
	}
	w = r.walkFrom(process.NewCache(r.mem, cacheBytes), head, c0)
	c1, err := r.mem.Uint32(cycleAddr)
	if err != nil {
		return nil, false, fmt.Errorf("runtime.mProfCycle: %w", err)
	}
	if c1 != c0 {
		return nil, true, nil
	}
	if held, err = r.profLockHeld(); err != nil || held || w.pending > 0 {
		return nil, false, err
	}
	return w, false, nil
}

// profLockHeld reads whether runtime.profMemActiveLock is held: any word but 0 (the lock's
// implementations keep waiters in it too) is taken as held. A runtime whose lock memdoctor
// does not know reads as free.
func (r *Reader) profLockHeld() (bool, error) {
	if r.profLock == 0 {
		return false, nil
	}
	k, err := r.mem.Uint64(r.profLock)
	if err != nil {
		return false, fmt.Errorf("runtime.profMemActiveLock: %w", err)
	}
	return k != 0, nil
}

// walkFrom reads the buckets from head, at mProfCycle's value cycle.
func (r *Reader) walkFrom(c *process.Cache, head uint64, cycle uint32) *walk {
	w := &walk{cycle: cycle}
	cur := (cycle >> 1) % 3
	visited := map[uint64]bool{}
	for addr, seen := head, 0; addr != 0; seen++ {
		if seen >= MaxBuckets {
			w.cut = true
			w.notes = append(w.notes, fmt.Sprintf("the memory profile's bucket list goes on past %d buckets: the rest is left out", MaxBuckets))
			break
		}
		if visited[addr] {
			w.cut = true
			w.notes = append(w.notes, fmt.Sprintf("the memory profile's bucket list loops back after %d buckets (corrupt memory): the rest is left out", seen))
			break
		}
		visited[addr] = true
		b, err := r.readBucket(c, addr, cur)
		if err != nil {
			// Without this bucket there is no link to the next one.
			w.skipped++
			w.notes = append(w.notes, fmt.Sprintf("the memory profile's bucket list could not be followed past %d buckets: %v", seen, err))
			break
		}
		addr = b.AllNext
		if !consistent(&b, r.bl.HasBytes(), cur) {
			w.skipped++
			continue
		}
		if cycle&1 == 1 && !b.Future[cur].Zero() {
			w.pending++
		}
		w.records = append(w.records, record{addr: b.Addr, size: b.Size, stack: b.Stack, active: b.Active, future: b.Future})
	}
	if w.skipped > 0 && !w.cut && len(w.notes) == 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d bucket(s) of the memory profile were being counted on each of %d reads and are left out of this reading", w.skipped, tries))
	}
	return w
}

// publisher turns the buckets' counts into what runtime.MemProfile would report, reading after
// reading: it keeps what the runtime's own reading would have changed.
//
// When nothing is published yet (no GC has flushed a cycle with counts in it: a young
// program, or one whose sampling was just turned on), runtime.MemProfile publishes every
// cycle, moving each bucket's future counts into active for good. memdoctor cannot move
// them; were it only to show them, a later reading, after a GC published some other cycle,
// would show them no more until the runtime flushes their own cycles, one or two GCs later:
// a site's counts would go from a figure to 0 and back (seen on a database/sql program watched
// from the moment sampling was turned on). So the publisher remembers, per bucket, what it
// moved, and counts it as published until the runtime has flushed that cycle itself: the
// profiles it makes are those /debug/pprof/heap would have served, fetched at each reading.
type publisher struct {
	moved map[uint64]*[3]process.Cycle // bucket address -> counts moved from each future cycle
	cycle uint32                       // mProfCycle at the last reading
	read  bool                         // a reading was made
}

// publish sets each record's view, and remembers what it moved.
func (p *publisher) publish(w *walk) {
	var flushed [3]bool
	if p.read {
		flushed = flushedSince(p.cycle, w.cycle)
	}
	p.cycle, p.read = w.cycle, true
	cur := (w.cycle >> 1) % 3
	empty := true
	for k := range w.records {
		rec := &w.records[k]
		rec.view = rec.active
		rec.view.Add(rec.future[cur])
		if m := p.moved[rec.addr]; m != nil {
			left := false
			for j := range m {
				// The runtime flushed future[j] since (by its cycles, or by a flush the
				// cycles do not show: its counts went below what was moved).
				if flushed[j] || rec.future[j].Allocs < m[j].Allocs || rec.future[j].Frees < m[j].Frees {
					m[j] = process.Cycle{}
				}
				if uint32(j) != cur {
					rec.view.Add(m[j])
				}
				left = left || !m[j].Zero()
			}
			if !left {
				delete(p.moved, rec.addr)
			}
		}
		empty = empty && rec.view.Allocs == 0 && rec.view.Frees == 0
	}
	if !empty {
		return
	}
	// runtime.MemProfile's case of a profile with nothing published (no GC yet, or GC off):
	// it moves every cycle into active.
	p.moved = map[uint64]*[3]process.Cycle{}
	for k := range w.records {
		rec := &w.records[k]
		f := rec.future
		for j := range f {
			rec.view.Add(f[j])
		}
		if f != [3]process.Cycle{} {
			p.moved[rec.addr] = &f
		}
	}
}

// flushedSince says which future cycles (by index) mProf_Flush published between two readings
// of mProfCycle: cycle c's index once NextCycle has made c current and the bit is set, and
// always before the next NextCycle. A value gone backwards (corrupt, or past the wrap) reads as
// all flushed.
func flushedSince(prev, now uint32) [3]bool {
	c0, c1 := prev>>1, now>>1
	d := (c1 + mProfCycleWrap - c0%mProfCycleWrap) % mProfCycleWrap
	if d >= 3 {
		return [3]bool{true, true, true}
	}
	var out [3]bool
	if prev&1 == 0 && (d > 0 || now&1 == 1) {
		out[c0%3] = true
	}
	for k := uint32(1); k < d; k++ {
		out[(c0+k)%3] = true
	}
	if d > 0 && now&1 == 1 {
		out[c1%3] = true
	}
	return out
}

// readBucket reads one bucket, again while its counts read as torn (see consistent), up to
// tries times; the last read is returned either way.
func (r *Reader) readBucket(c *process.Cache, addr uint64, cur uint32) (process.Bucket, error) {
	var b process.Bucket
	var err error
	for i := 0; i < tries; i++ {
		if i == 0 {
			b, err = r.bl.ReadBucket(c, addr)
		} else {
			b, err = r.bl.ReadBucket(r.mem, addr) // past the cache's copy
		}
		if err != nil || consistent(&b, r.bl.HasBytes(), cur) {
			return b, err
		}
	}
	return b, nil
}

// consistent says whether a bucket's counts can be a state of the runtime's: no cycle frees
// more than was allocated in total, and (Go 1.26, which counts bytes too) the published
// counts, active and future[cur], are bytes the counts times the size. Only a flush writes
// those, and a flush is the walk's to see (readBuckets). The other two cycles are counting:
// an allocation or a free is counted in objects, then in bytes, under a lock memdoctor does
// not take, and a thread the kernel deschedules between the two leaves them so for as long
// (a bucket allocated from all the time was left out of readings in a row for it). There the
// bytes are made the counts times the size, as they are about to be.
func consistent(b *process.Bucket, hasBytes bool, cur uint32) bool {
	if b.Size == 0 {
		return false
	}
	var allocs, frees uint64
	for j := -1; j < len(b.Future); j++ {
		c := &b.Active
		if j >= 0 {
			c = &b.Future[j]
		}
		if hasBytes && (c.AllocBytes != c.Allocs*b.Size || c.FreeBytes != c.Frees*b.Size) {
			if j < 0 || uint32(j) == cur {
				return false
			}
			c.AllocBytes, c.FreeBytes = c.Allocs*b.Size, c.Frees*b.Size
		}
		allocs += c.Allocs
		frees += c.Frees
	}
	return frees <= allocs
}
