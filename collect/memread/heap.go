package memread

import (
	"fmt"
	"math/bits"
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
	Retries int           // readings made again, or waited for, while a GC published a cycle
	Took    time.Duration // the reading's wall time (the target runs all along)
	Bytes   int64         // bytes read from the target
	Notes   []string
}

// How the runtime publishes its heap profile (src/runtime/mprof.go, the same in Go 1.26 and
// 1.27), and what memdoctor, which takes none of its locks, can see of it.
//
// Each bucket counts allocations in future[(C+2)%3] and sweep frees in future[(C+1)%3], C
// being the heap-profile cycle (mProfCycle >> 1); active holds what is published. At a GC's
// mark termination mProf_NextCycle makes C+1 current and clears mProfCycle's flushed bit
// (bit 0); once the world runs again, mProf_Flush sets the bit and then, holding
// profMemActiveLock, walks every bucket adding future[C%3] to active and zeroing it, which it
// must do before the next NextCycle. runtime.MemProfile makes the same flush under the same
// lock (a no-op once mProf_Flush has made it) and reports active; mProf_PostSweep
// (runtime.GC only) flushes future[(C+1)%3] early, under the lock too. So what
// runtime.MemProfile reports for a bucket is active + future[C%3]: no flush of C%3 changes
// it, and it only grows.
//
// Reading without the locks, memdoctor sees a flush of future[C%3] that runs while it copies
// a bucket as a tear: active copied before the add and future[C%3] after the zeroing loses
// the cycle's counts; active after and future before counts them twice, and a flusher that
// the kernel takes off its CPU between its two stores leaves the bucket so for as long as it
// is off (the copy goes up the addresses, active first). Such a flush runs only between
// NextCycle and the end of mProf_Flush's walk, holding the lock. So a walk is kept only when
//   - mProfCycle reads the same before and after it: no NextCycle, no flush began;
//   - the flushed bit is set (or the cycle is 0: no GC has run; only the program's own
//     runtime.MemProfile publishes then);
//   - profMemActiveLock reads free before and after it; and
//   - no bucket read still holds counts in future[C%3], which mProf_Flush zeroes in every
//     bucket and nothing else writes during cycle C: a bucket counted twice shows them.
// A walk kept with a bucket whose counts were lost had a flush run while it was made: one
// that set the bit before it and took the lock after the lock was read free, its flusher
// stopped for longer than a read of the target's memory between two of its statements; that
// was done before the walk ended; and that was ahead of the walk at every bucket with counts
// to publish, but at the one it tore, so stopped again there. And the program's own first
// runtime.MemProfile, publishing everything before any GC did, made wholly within a walk.
// A walk that fails the checks is made again, after a pause when the runtime was publishing
// (it ends within microseconds of NextCycle on a running program); the reading is given up
// after tries walks that a NextCycle overlapped, or after finding the runtime publishing
// flushTries times (waiting 1+2+3+4 pauses in all).
//
// The cost: two 8-byte reads of the lock per walk, and a walk (or only the two reads that
// saw the runtime publishing) made again when a GC was publishing a cycle.

// readBuckets walks the bucket list from its head, read once: new buckets are published at
// the head and a bucket's links never change, so the walk sees every bucket that existed when
// it began. It keeps only a walk that no publication of a heap-profile cycle overlapped (see
// above): a walk that one did is made again, so that no profile mixes two cycles or a
// cycle's counts half moved.
func (r *Reader) readBuckets() (*walk, int, error) {
	cycleAddr, headAddr := r.sym[symCycle].Addr, r.sym[symBuckets].Addr
	if r.static {
		w, err := r.walkStill(cycleAddr, headAddr)
		return w, 0, err
	}
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

// walkStill walks memory that does not change (a core): a flush it shows halfway (the lock
// held) is said in a note, the one bucket the flusher was at being possibly counted twice or
// in part; a flush not begun or done reads right.
func (r *Reader) walkStill(cycleAddr, headAddr uint64) (*walk, error) {
	c, err := r.mem.Uint32(cycleAddr)
	if err != nil {
		return nil, fmt.Errorf("runtime.mProfCycle: %w", err)
	}
	held, err := r.profLockHeld()
	if err != nil {
		return nil, err
	}
	head, err := r.mem.Uint64(headAddr)
	if err != nil {
		return nil, fmt.Errorf("runtime.mbuckets: %w", err)
	}
	w := r.walkFrom(process.NewCache(r.mem, cacheBytes), head, c)
	if held {
		w.notes = append(w.notes, "the memory was taken while the runtime held its heap profile's lock (publishing a cycle, or reading its profile): a bucket may be counted in part or twice")
	}
	return w, nil
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
// published so (all the bucket's counts then: active was 0), and adds to what the runtime has
// published (active + future[C%3]) whatever of it the runtime has not published yet: until
// the runtime has published that much, what it has published of the bucket is only some of
// those counts. Those counts sat in the two cycles then counting (future[(C+1)%3] held the
// allocations of cycle C-1 and the frees of cycle C, future[(C+2)%3] the allocations of cycle
// C; future[C%3] was empty, or something would have been published); the runtime publishes
// the first at the next cycle (or its sweep's end, or a reading of the program's own), with
// only frees counted since in it, the second after, with what was counted since in it; what
// is counted later goes to cycles published after those. So the published allocations are
// the remembered ones until they reach their number, and so are the frees. The profiles it
// makes are those /debug/pprof/heap would have served, fetched at each reading; once the
// program reads its own profile first, publishing everything itself, they are that program's.
type publisher struct {
	moved map[uint64]process.Cycle // bucket address -> the counts published early
}

// publish sets each record's view, and remembers what it published early.
func (p *publisher) publish(w *walk) {
	cur := (w.cycle >> 1) % 3
	empty := true
	for k := range w.records {
		rec := &w.records[k]
		rec.view = rec.active
		rec.view.Add(rec.future[cur])
		if m, ok := p.moved[rec.addr]; ok {
			if left := unpublished(m, rec.view); left.Zero() {
				delete(p.moved, rec.addr)
			} else {
				rec.view.Add(left)
			}
		}
		empty = empty && rec.view.Allocs == 0 && rec.view.Frees == 0
	}
	if !empty {
		return
	}
	// runtime.MemProfile's case of a profile with nothing published (no GC yet, or GC off):
	// it publishes every cycle.
	p.moved = map[uint64]process.Cycle{}
	for k := range w.records {
		rec := &w.records[k]
		for _, f := range rec.future {
			rec.view.Add(f)
		}
		if !rec.view.Zero() {
			p.moved[rec.addr] = rec.view
		}
	}
}

// unpublished is what of the counts published early (moved) the runtime has not published
// yet, it having published pub.
func unpublished(moved, pub process.Cycle) process.Cycle {
	sub := func(a, b uint64) uint64 {
		if a > b {
			return a - b
		}
		return 0
	}
	return process.Cycle{Allocs: sub(moved.Allocs, pub.Allocs), Frees: sub(moved.Frees, pub.Frees),
		AllocBytes: sub(moved.AllocBytes, pub.AllocBytes), FreeBytes: sub(moved.FreeBytes, pub.FreeBytes)}
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
//
// Counts no runtime reaches are not a state either: a count whose bytes pass 2^64 (the
// product wraps, and could match the bytes read), counts whose sum does, and a published
// view (active and future[cur], what the runtime reports) freeing more than it allocated: an
// object's free is published a cycle or more after its allocation, never before.
func consistent(b *process.Bucket, hasBytes bool, cur uint32) bool {
	if b.Size == 0 {
		return false
	}
	var all, pub process.Cycle
	for j := -1; j < len(b.Future); j++ {
		c := &b.Active
		if j >= 0 {
			c = &b.Future[j]
		}
		published := j < 0 || uint32(j) == cur
		allocBytes, ok1 := product(c.Allocs, b.Size)
		freeBytes, ok2 := product(c.Frees, b.Size)
		if !ok1 || !ok2 {
			return false
		}
		if hasBytes && (c.AllocBytes != allocBytes || c.FreeBytes != freeBytes) {
			if published {
				return false
			}
			c.AllocBytes, c.FreeBytes = allocBytes, freeBytes
		}
		if !addCounts(&all, c) || published && !addCounts(&pub, c) {
			return false
		}
	}
	return all.Frees <= all.Allocs && pub.Frees <= pub.Allocs
}

// product is n objects of size bytes, and whether that fits in 64 bits.
func product(n, size uint64) (uint64, bool) {
	hi, lo := bits.Mul64(n, size)
	return lo, hi == 0
}

// addCounts adds c's object counts to sum, and says whether they fit in 64 bits.
func addCounts(sum, c *process.Cycle) bool {
	var carry1, carry2 uint64
	sum.Allocs, carry1 = bits.Add64(sum.Allocs, c.Allocs, 0)
	sum.Frees, carry2 = bits.Add64(sum.Frees, c.Frees, 0)
	return carry1 == 0 && carry2 == 0
}
