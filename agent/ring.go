package agent

import (
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

// slot is one sample: the parts inline, so that taking a sample allocates nothing.
type slot struct {
	seq    uint64
	t      time.Time
	hasGo  bool
	hasPrc bool
	hasCg  bool
	gomem  record.GoMem
	proc   record.Proc
	cg     record.Cgroup
}

// sample returns the slot as a record.Sample (with copies of its parts).
func (s *slot) sample() record.Sample {
	smp := record.Sample{Time: s.t}
	if s.hasGo {
		g := s.gomem
		smp.Go = &g
	}
	if s.hasPrc {
		p := s.proc
		smp.Proc = &p
	}
	if s.hasCg {
		c := s.cg
		smp.Cgroup = &c
	}
	return smp
}

// stored is a slot as the ring keeps it: without a single pointer (the time as nanoseconds,
// the Go part's Source left empty and restored on the way out), so that the ring can live
// outside the Go heap.
type stored struct {
	seq      uint64
	unixNano int64
	hasGo    bool
	hasPrc   bool
	hasCg    bool
	gomem    record.GoMem
	proc     record.Proc
	cg       record.Cgroup
}

func (st *stored) time() time.Time { return time.Unix(0, st.unixNano).UTC() }

// goSource is the Source of every Go part the agent stores.
const goSource = "runtime/metrics"

// ring is a fixed-size history of samples, numbered by sequence: the slot of sequence n is
// slots[n % len(slots)]. One writer (the agent's loop) adds; readers copy slots out under the
// read lock, one at a time, so a slow reader never holds the writer up for long.
//
// The slots are allocated once, outside the Go heap where the system allows (an anonymous
// mapping, see allocSlots): their pages become resident only as samples fill them, they add
// nothing to the live heap the GC paces itself on (an hour of samples would otherwise raise
// the heap goal by twice its size), and the GC never scans them.
type ring struct {
	mu    sync.RWMutex
	slots []stored
	next  uint64 // sequence of the next sample
}

func newRing(n int) *ring {
	if n < 1 {
		n = 1
	}
	slots, release := allocSlots(n)
	r := &ring{slots: slots}
	if release != nil { // unmap once nothing can reach the ring
		runtime.AddCleanup(r, func(release func()) { release() }, release)
	}
	return r
}

// add stores a copy of s and returns its sequence number.
func (r *ring) add(s *slot) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.next
	dst := &r.slots[seq%uint64(len(r.slots))]
	*dst = stored{seq: seq, unixNano: s.t.UnixNano(), hasGo: s.hasGo, hasPrc: s.hasPrc, hasCg: s.hasCg, gomem: s.gomem, proc: s.proc, cg: s.cg}
	dst.gomem.Source = "" // no pointer outside the Go heap
	r.next++
	return seq
}

// load copies a stored sample out.
func load(st *stored, out *slot) {
	*out = slot{seq: st.seq, t: st.time(), hasGo: st.hasGo, hasPrc: st.hasPrc, hasCg: st.hasCg, gomem: st.gomem, proc: st.proc, cg: st.cg}
	if out.hasGo {
		out.gomem.Source = goSource
	}
}

// boundsLocked returns the sequences held, [first, end).
func (r *ring) boundsLocked() (first, end uint64) {
	end = r.next
	if n := uint64(len(r.slots)); end > n {
		first = end - n
	}
	return first, end
}

// len returns how many samples the ring holds.
func (r *ring) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	first, end := r.boundsLocked()
	return int(end - first)
}

// get copies the sample of sequence seq into out; false when it is not (or no longer) held.
func (r *ring) get(seq uint64, out *slot) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	first, end := r.boundsLocked()
	if seq < first || seq >= end {
		return false
	}
	load(&r.slots[seq%uint64(len(r.slots))], out)
	return true
}

// latest copies the newest sample into out; false when the ring is empty.
func (r *ring) latest(out *slot) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.next == 0 {
		return false
	}
	load(&r.slots[(r.next-1)%uint64(len(r.slots))], out)
	return true
}

// firstAfter returns the sequence of the first sample taken after t (the oldest one held when
// t is zero), and the end of the sequences held. Samples are in time order unless the wall
// clock was stepped back; the search assumes order, and a step only misplaces its border.
func (r *ring) firstAfter(t time.Time) (seq, end uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	first, end := r.boundsLocked()
	if t.IsZero() {
		return first, end
	}
	n := int(end - first)
	i := sort.Search(n, func(i int) bool {
		s := first + uint64(i)
		return r.slots[s%uint64(len(r.slots))].unixNano > t.UnixNano()
	})
	return first + uint64(i), end
}

// at returns the newest sample taken at or before t, into out; false if none is held.
func (r *ring) at(t time.Time, out *slot) bool {
	seq, _ := r.firstAfter(t)
	if seq == 0 {
		return false
	}
	return r.get(seq-1, out)
}

// oldest returns the time of the oldest sample held (zero when empty).
func (r *ring) oldest() time.Time {
	r.mu.RLock()
	defer r.mu.RUnlock()
	first, end := r.boundsLocked()
	if first == end {
		return time.Time{}
	}
	return r.slots[first%uint64(len(r.slots))].time()
}
