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

// cacheBytes is the memory a reading keeps of the target's buckets while it walks them.
const cacheBytes = 1 << 20

// record is one bucket as the heap profile shows it: its stack and the counts runtime.MemProfile
// would report now.
type record struct {
	size  uint64
	stack []uint64
	view  process.Cycle // published: what runtime.MemProfile reports
	all   process.Cycle // every cycle, published or not
}

// walk is one pass over the bucket list.
type walk struct {
	records []record
	skipped int      // buckets left out: unreadable, or their counts torn on every try
	notes   []string // why
	cut     bool     // the list was longer than MaxBuckets
}

// HeapReading is one reading of the heap profile.
type HeapReading struct {
	Records int           // buckets in the profile
	Skipped int           // buckets left out (see Notes)
	Rate    int64         // runtime.MemProfileRate when read; 0: sampling is off
	Retries int           // walks made again because a GC published a cycle meanwhile
	Took    time.Duration // the reading's wall time (the target runs all along)
	Bytes   int64         // bytes read from the target
	Notes   []string
}

// readBuckets walks the bucket list from its head, read once: new buckets are published at
// the head and a bucket's links never change, so the walk sees every bucket that existed when
// it began. The heap-profile cycle is read before and after: a GC that published a cycle in
// between makes the walk start again, so that no profile mixes two cycles.
func (r *Reader) readBuckets() (*walk, int, error) {
	cycleAddr, headAddr := r.sym[symCycle].Addr, r.sym[symBuckets].Addr
	for retry := 0; ; retry++ {
		c0, err := r.mem.Uint32(cycleAddr)
		if err != nil {
			return nil, retry, fmt.Errorf("runtime.mProfCycle: %w", err)
		}
		head, err := r.mem.Uint64(headAddr)
		if err != nil {
			return nil, retry, fmt.Errorf("runtime.mbuckets: %w", err)
		}
		w := r.walkFrom(process.NewCache(r.mem, cacheBytes), head, c0>>1)
		c1, err := r.mem.Uint32(cycleAddr)
		if err != nil {
			return nil, retry, fmt.Errorf("runtime.mProfCycle: %w", err)
		}
		if c0 == c1 {
			return w, retry, nil
		}
		if retry+1 >= tries {
			return nil, retry, fmt.Errorf("a GC published a heap-profile cycle during each of %d readings of the buckets: try again", tries)
		}
	}
}

// walkFrom reads the buckets from head, and what runtime.MemProfile would report for each at
// heap-profile cycle `cycle`.
func (r *Reader) walkFrom(c *process.Cache, head uint64, cycle uint32) *walk {
	w := &walk{}
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
		b, err := r.readBucket(c, addr)
		if err != nil {
			// Without this bucket there is no link to the next one.
			w.skipped++
			w.notes = append(w.notes, fmt.Sprintf("the memory profile's bucket list could not be followed past %d buckets: %v", seen, err))
			break
		}
		addr = b.AllNext
		if !consistent(b, r.bl.HasBytes()) {
			w.skipped++
			continue
		}
		all := b.Active
		for _, f := range b.Future {
			all.Add(f)
		}
		w.records = append(w.records, record{size: b.Size, stack: b.Stack, view: published(b, cycle), all: all})
	}
	if w.skipped > 0 && !w.cut && len(w.notes) == 0 {
		w.notes = append(w.notes, fmt.Sprintf("%d bucket(s) of the memory profile were being counted on each of %d reads and are left out of this reading", w.skipped, tries))
	}
	if allZero(w.records) {
		// runtime.MemProfile's case of a profile with no published counts (no GC yet, or
		// GC off): every cycle counts.
		for i := range w.records {
			w.records[i].view = w.records[i].all
		}
	}
	return w
}

// readBucket reads one bucket, again while its counts read as torn (an allocation counted in
// objects and not yet in bytes), up to tries times; the last read is returned either way.
func (r *Reader) readBucket(c *process.Cache, addr uint64) (process.Bucket, error) {
	var b process.Bucket
	var err error
	for i := 0; i < tries; i++ {
		if i == 0 {
			b, err = r.bl.ReadBucket(c, addr)
		} else {
			b, err = r.bl.ReadBucket(r.mem, addr) // past the cache's copy
		}
		if err != nil || consistent(b, r.bl.HasBytes()) {
			return b, err
		}
	}
	return b, nil
}

// consistent says whether a bucket's counts can be a state of the runtime's: bytes are counts
// times the size (Go 1.26 counts both, under a lock memdoctor does not take), and no cycle
// frees more than was allocated in total.
func consistent(b process.Bucket, hasBytes bool) bool {
	if b.Size == 0 {
		return false
	}
	cs := append([]process.Cycle{b.Active}, b.Future[:]...)
	var allocs, frees uint64
	for _, c := range cs {
		if hasBytes && (c.AllocBytes != c.Allocs*b.Size || c.FreeBytes != c.Frees*b.Size) {
			return false
		}
		allocs += c.Allocs
		frees += c.Frees
	}
	return frees <= allocs
}

// published is what runtime.MemProfile reports for a bucket at heap-profile cycle `cycle`:
// the active counts plus those of the cycle it flushes first (future[cycle%3]), which it
// publishes when a GC's mark termination has started a cycle it has not flushed yet.
func published(b process.Bucket, cycle uint32) process.Cycle {
	v := b.Active
	v.Add(b.Future[cycle%uint32(len(b.Future))])
	return v
}

func allZero(rs []record) bool {
	for _, r := range rs {
		if r.view.Allocs != 0 || r.view.Frees != 0 {
			return false
		}
	}
	return true
}
