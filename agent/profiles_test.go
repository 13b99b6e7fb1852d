package agent

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

func round(n int) map[string][]byte {
	return map[string][]byte{
		record.KindHeap:      bytes.Repeat([]byte{'h'}, n),
		record.KindGoroutine: bytes.Repeat([]byte{'g'}, n/2),
	}
}

func sec(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

func TestProfileRingRotates(t *testing.T) {
	s := newProfileStore(3, 2, 1<<30)
	for i := range 5 {
		s.addPeriodic(sec(15*i), round(1000))
	}
	list := s.list()
	if len(list) != 6 {
		t.Fatalf("%d profiles listed, want 3 rounds of 2", len(list))
	}
	if !list[0].Time.Equal(sec(30)) || list[0].Label != "" || list[0].Name != record.ProfileFileName(record.KindHeap, sec(30), "") {
		t.Errorf("oldest listed %+v, want the heap of round 3 at 30s", list[0])
	}
	if _, ok := s.bytesOf(record.ProfileFileName(record.KindHeap, sec(15), "")); ok {
		t.Error("a rotated-out profile is still served")
	}
}

func TestEventKeepsThePairBeyondRotation(t *testing.T) {
	s := newProfileStore(2, 4, 1<<30)
	s.addPeriodic(sec(0), round(100))
	s.addPeriodic(sec(15), round(200))
	s.addPeriodic(sec(30), round(300)) // taken during the spike, which began at 20s
	ev := s.addEvent(Event{Time: sec(33), Trigger: TriggerHeapJump}, sec(20))
	if ev.After != "" {
		t.Errorf("after %q before any was taken", ev.After)
	}
	s.addAfter([]uint64{ev.ID}, sec(33), round(400))
	ev = s.eventList()[0]
	wantBefore := record.ProfileFileName(record.KindHeap, sec(15), "before-heap-jump")
	wantAfter := record.ProfileFileName(record.KindHeap, sec(33), "after-heap-jump")
	if ev.Before != wantBefore || ev.After != wantAfter || ev.ID == 0 {
		t.Fatalf("event names %q, %q (id %d); want %q, %q", ev.Before, ev.After, ev.ID, wantBefore, wantAfter)
	}
	if !strings.Contains(ev.BeforeGoroutine, "before-heap-jump") || !strings.Contains(ev.AfterGoroutine, "after-heap-jump") {
		t.Errorf("goroutine names %q, %q", ev.BeforeGoroutine, ev.AfterGoroutine)
	}
	// The periodic ring moves on; the pair stays.
	for i := 3; i < 10; i++ {
		s.addPeriodic(sec(15*i), round(100))
	}
	b, ok := s.bytesOf(wantBefore)
	if !ok || len(b) != 200 || b[0] != 'h' {
		t.Fatalf("before profile: %d bytes, found %v; want the 200-byte heap of 15s", len(b), ok)
	}
	if a, ok := s.bytesOf(wantAfter); !ok || len(a) != 400 {
		t.Errorf("after profile: %d bytes, found %v", len(a), ok)
	}
	labels := map[string]int{}
	for _, p := range s.list() {
		labels[p.Label]++
	}
	if labels["before-heap-jump"] != 2 || labels["after-heap-jump"] != 2 || labels[""] != 4 {
		t.Errorf("labels listed %v", labels)
	}
	if evs := s.eventList(); len(evs) != 1 || evs[0].Before != wantBefore {
		t.Errorf("events %+v", evs)
	}
}

// TestBeforeIsOlderThanTheSpike: the "before" must predate the rise, even when a periodic
// round was taken during it.
func TestBeforeIsOlderThanTheSpike(t *testing.T) {
	s := newProfileStore(8, 4, 1<<30)
	for i := range 4 {
		s.addPeriodic(sec(15*i), round(10)) // 0, 15, 30, 45
	}
	ev := s.addEvent(Event{Time: sec(50), Trigger: TriggerRSS}, sec(44))
	if want := record.ProfileFileName(record.KindHeap, sec(30), "before-rss-threshold"); ev.Before != want {
		t.Errorf("before %q, want the round at 30s (%q)", ev.Before, want)
	}
	if ev.After != "" {
		t.Errorf("after %q though nothing was captured", ev.After)
	}
	// Two events pending at once share one "after" capture.
	ev2 := s.addEvent(Event{Time: sec(50), Trigger: TriggerHeapJump}, sec(44))
	held := s.heldBytes()
	s.addAfter([]uint64{ev.ID, ev2.ID}, sec(52), round(1000))
	if got := s.heldBytes() - held; got != 1500 {
		t.Errorf("the shared after pair added %d bytes, want 1500 (stored once)", got)
	}
	evs := s.eventList()
	if evs[0].After != record.ProfileFileName(record.KindHeap, sec(52), "after-rss-threshold") ||
		evs[1].After != record.ProfileFileName(record.KindHeap, sec(52), "after-heap-jump") {
		t.Errorf("after names %q, %q", evs[0].After, evs[1].After)
	}
	// A spike older than every round held gets the oldest round.
	ev = s.addEvent(Event{Time: sec(51), Trigger: TriggerGoroutines}, sec(-100))
	if want := record.ProfileFileName(record.KindHeap, sec(0), "before-goroutine-growth"); ev.Before != want {
		t.Errorf("before %q, want the oldest round (%q)", ev.Before, want)
	}
}

func TestProfileStoreBounds(t *testing.T) {
	s := newProfileStore(100, 3, 20000)
	for i := range 40 {
		s.addPeriodic(sec(i), round(1000))
		if i%5 == 0 {
			ev := s.addEvent(Event{Time: sec(i), Trigger: TriggerHeapJump}, sec(i-1))
			s.addAfter([]uint64{ev.ID}, sec(i), round(1000))
		}
		if got := s.heldBytes(); got > 20000 {
			t.Fatalf("after round %d the store holds %d bytes, over its cap", i, got)
		}
	}
	if n := len(s.eventList()); n == 0 || n > 3 {
		t.Errorf("%d events kept, want 1 to 3", n)
	}
	if c := s.eventCounts()[TriggerHeapJump]; c != 8 {
		t.Errorf("event count %d, want 8", c)
	}
	var sum int64
	seen := map[*blob]bool{}
	for _, r := range s.periodic {
		seen[r.b] = true
	}
	for _, ke := range s.events {
		for _, r := range ke.recs {
			seen[r.b] = true
		}
	}
	for b := range seen {
		sum += int64(cap(b.data))
	}
	if sum != s.heldBytes() {
		t.Errorf("accounted %d bytes, the blobs hold %d", s.heldBytes(), sum)
	}
}

func TestWriteToOutlivesEviction(t *testing.T) {
	s := newProfileStore(2, 1, 1<<30)
	s.addPeriodic(sec(0), round(100))
	name := s.list()[0].Name
	var buf bytes.Buffer
	found, err := s.writeTo(name, writerFunc(func(p []byte) (int, error) {
		// Evict the profile while it is being written: its bytes must stay intact.
		s.addPeriodic(sec(1), round(100))
		s.addPeriodic(sec(2), round(100))
		s.addPeriodic(sec(3), round(100))
		return buf.Write(p)
	}))
	if !found || err != nil || buf.Len() != 100 || bytes.Count(buf.Bytes(), []byte{'h'}) != 100 {
		t.Fatalf("found %v err %v, wrote %q", found, err, buf.String())
	}
	if found, _ := s.writeTo(name, &buf); found {
		t.Error("an evicted profile is still found")
	}
	if found, _ := s.writeTo("nonexistent", &buf); found {
		t.Error("found a profile that never existed")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestBufPoolBounded(t *testing.T) {
	var p bufPool
	for range 10 {
		p.put(make([]byte, 10, 100))
	}
	p.put(make([]byte, 0, poolMaxCap+1))
	if len(p.free) != poolMax {
		t.Errorf("%d buffers pooled, want %d", len(p.free), poolMax)
	}
	if b := p.get(); len(b) != 0 || cap(b) != 100 {
		t.Errorf("got len %d cap %d", len(b), cap(b))
	}
}
