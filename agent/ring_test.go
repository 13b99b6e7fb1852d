package agent

import (
	"testing"
	"time"
	"unsafe"

	"github.com/memdoctor/memdoctor/agent/record"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func slotAt(i int) *slot {
	return &slot{
		t:      t0.Add(time.Duration(i) * time.Second),
		hasGo:  true,
		gomem:  record.GoMem{Source: "runtime/metrics", GCCycles: uint64(i)},
		hasPrc: i%2 == 0,
		proc:   record.Proc{PID: 1, RSSBytes: uint64(i) << 20},
	}
}

func TestRingRotation(t *testing.T) {
	r := newRing(5)
	var out slot
	if r.latest(&out) || r.len() != 0 || !r.oldest().IsZero() {
		t.Fatal("an empty ring returned a sample")
	}
	for i := range 12 {
		if seq := r.add(slotAt(i)); seq != uint64(i) {
			t.Fatalf("add %d: sequence %d", i, seq)
		}
	}
	if r.len() != 5 {
		t.Errorf("len = %d, want 5", r.len())
	}
	if !r.oldest().Equal(t0.Add(7 * time.Second)) {
		t.Errorf("oldest = %v, want sample 7", r.oldest())
	}
	for seq := range uint64(12) {
		ok := r.get(seq, &out)
		if want := seq >= 7; ok != want {
			t.Errorf("get(%d) = %v, want %v", seq, ok, want)
		}
		if ok && out.gomem.GCCycles != seq {
			t.Errorf("get(%d) returned sample %d", seq, out.gomem.GCCycles)
		}
	}
	if !r.latest(&out) || out.gomem.GCCycles != 11 {
		t.Errorf("latest = %d", out.gomem.GCCycles)
	}
}

func TestRingFirstAfter(t *testing.T) {
	r := newRing(10)
	for i := range 25 { // holds 15..24
		r.add(slotAt(i))
	}
	for _, tc := range []struct {
		since     time.Time
		wantFirst uint64
	}{
		{time.Time{}, 15},
		{t0, 15},                       // before everything held
		{t0.Add(17 * time.Second), 18}, // strictly after
		{t0.Add(17*time.Second + time.Millisecond), 18},
		{t0.Add(24 * time.Second), 25}, // nothing newer
		{t0.Add(time.Hour), 25},
	} {
		seq, end := r.firstAfter(tc.since)
		if seq != tc.wantFirst || end != 25 {
			t.Errorf("firstAfter(%v) = %d, %d; want %d, 25", tc.since.Sub(t0), seq, end, tc.wantFirst)
		}
	}
	var out slot
	if !r.at(t0.Add(20*time.Second+500*time.Millisecond), &out) || out.gomem.GCCycles != 20 {
		t.Errorf("at(20.5s) = sample %d, want 20", out.gomem.GCCycles)
	}
	if r.at(t0.Add(10*time.Second), &out) {
		t.Errorf("at(10s) found sample %d, which rotated out", out.gomem.GCCycles)
	}
}

func TestSlotSampleCopies(t *testing.T) {
	s := slotAt(4)
	smp := s.sample()
	if smp.Go == nil || smp.Proc == nil || smp.Cgroup != nil {
		t.Fatalf("parts: go %v proc %v cgroup %v", smp.Go != nil, smp.Proc != nil, smp.Cgroup != nil)
	}
	smp.Go.GCCycles = 99
	if s.gomem.GCCycles != 4 {
		t.Error("the sample shares memory with the slot")
	}
}

// TestSamplingAllocatesNothing checks the promise of the hot path: storing a sample and
// reading runtime/metrics allocate nothing once warm.
func TestSamplingAllocatesNothing(t *testing.T) {
	r := newRing(60)
	mr := newMetricsReader()
	var s slot
	mr.read(&s.gomem) // the pause histogram is allocated on the first read
	if n := testing.AllocsPerRun(100, func() {
		mr.read(&s.gomem)
		s.hasGo = true
		r.add(&s)
	}); n != 0 {
		t.Errorf("a sample allocates %.1f times, want 0", n)
	}
}

// TestRingOutsideTheHeap: an hour of samples must not count as live heap (the GC would pace
// itself on it and double it) where the system has anonymous mappings.
func TestRingOutsideTheHeap(t *testing.T) {
	if _, release := allocSlots(1); release == nil {
		t.Skip("no anonymous mappings here: the ring is on the Go heap")
	}
	mr := newMetricsReader()
	var before, after record.GoMem
	mr.read(&before)
	r := newRing(200_000) // 85 MB of slots
	mr.read(&after)
	if grew := int64(after.HeapObjectsBytes) - int64(before.HeapObjectsBytes); grew > 8<<20 {
		t.Errorf("a ring of %d MB grew the heap by %d MB", 200_000*int(unsafe.Sizeof(stored{}))>>20, grew>>20)
	}
	for i := range 300_000 { // wrap around: every slot is written, and read back
		r.add(slotAt(i))
	}
	var s slot
	if !r.get(299_999, &s) || s.gomem.GCCycles != 299_999 || s.gomem.Source != "runtime/metrics" || !s.t.Equal(t0.Add(299_999*time.Second)) {
		t.Errorf("read back %+v", s)
	}
}
