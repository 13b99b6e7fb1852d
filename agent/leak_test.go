package agent

import (
	"bytes"
	"log/slog"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
	"github.com/memdoctor/memdoctor/agent/record"
)

// TestLeakProfilesKept: the store keeps the last maxLeakProfiles goroutineleak profiles,
// lists them with their kind, serves their bytes, and under the byte cap gives up periodic
// rounds before them.
func TestLeakProfilesKept(t *testing.T) {
	s := newProfileStore(8, 8, 1<<30)
	for i := range 6 {
		s.addLeak(sec(60*i), bytes.Repeat([]byte{byte('a' + i)}, 100))
	}
	var leaks []ProfileInfo
	for _, p := range s.list() {
		if p.Kind == record.KindGoroutineLeak {
			leaks = append(leaks, p)
		}
	}
	if len(leaks) != maxLeakProfiles || !leaks[0].Time.Equal(sec(120)) || leaks[0].Name != record.ProfileFileName(record.KindGoroutineLeak, sec(120), "") {
		t.Fatalf("listed %+v; want the last %d, from %v", leaks, maxLeakProfiles, sec(120))
	}
	if b, ok := s.bytesOf(leaks[3].Name); !ok || b[0] != 'f' {
		t.Errorf("bytes of the newest: %q, %v", b, ok)
	}

	small := newProfileStore(8, 8, 3000)
	small.addPeriodic(sec(0), round(1000)) // 1500 bytes
	small.addPeriodic(sec(15), round(1000))
	small.addLeak(sec(16), make([]byte, 1000))
	small.addLeak(sec(17), make([]byte, 1000))
	kinds := map[string]int{}
	for _, p := range small.list() {
		kinds[p.Kind]++
	}
	if kinds[record.KindHeap] != 1 || kinds[record.KindGoroutineLeak] != 1 || small.heldBytes() > 3000 {
		t.Errorf("under a 3000-byte cap: %v, %d bytes; want one periodic round and the newest leak profile", kinds, small.heldBytes())
	}
}

// TestCheckLeaks drives the agent's decisions with synthetic times: one capture at a time,
// at the start, on the goroutine-growth trigger, on a climb since the last one, and every
// interval; never two within the gap.
func TestCheckLeaks(t *testing.T) {
	var writes atomic.Int64
	release := make(chan struct{})
	a := &Agent{log: slog.New(slog.DiscardHandler), store: newProfileStore(8, 8, 1<<30)}
	a.leaks = &leakChecker{
		policy: leakcheck.Policy{Every: 10 * time.Minute, MinGap: leakMinGap, ClimbRatio: 0.5, ClimbMin: 1000},
		state:  leakcheck.State{LastGoroutines: -1},
		done:   make(chan struct{}, 1),
		write: func(*bufPool) ([]byte, error) {
			writes.Add(1)
			<-release
			return []byte("p"), nil
		},
	}
	step := func(at time.Duration, goroutines int, grew bool, want int64) {
		t.Helper()
		a.checkLeaks(t0.Add(at), goroutines, grew)
		if a.leaks.busy {
			release <- struct{}{}
			a.wg.Wait()
		}
		if got := writes.Load(); got != want {
			t.Fatalf("after %v (%d goroutines, grew %v): %d captures, want %d", at, goroutines, grew, got, want)
		}
	}
	step(0, 100, false, 1)                            // start
	step(2*time.Minute, 100, false, 1)                // quiet
	step(2*time.Minute, 100, true, 2)                 // the goroutine-growth trigger fired
	step(2*time.Minute+30*time.Second, 9000, true, 2) // within the gap
	step(3*time.Minute+time.Second, 1500, false, 3)   // climbed 1400 and 1400% since the last
	step(4*time.Minute+2*time.Second, 2000, false, 3) // 500 more: under the margin
	step(13*time.Minute+2*time.Second, 2000, false, 4)

	// While a capture runs, no other starts.
	a.checkLeaks(t0.Add(30*time.Minute), 2000, false)
	a.checkLeaks(t0.Add(60*time.Minute), 90000, true)
	release <- struct{}{}
	a.wg.Wait()
	if writes.Load() != 5 {
		t.Errorf("%d captures, want 5: one ran while another was due", writes.Load())
	}
}

// TestNoLeakProfileWithoutTheRuntime: on a runtime without the goroutineleak profile (this
// test binary's go1.26, unless built with the experiment), or with the option at 0, the
// agent takes none.
func TestNoLeakProfileWithoutTheRuntime(t *testing.T) {
	cfg := defaultConfig()
	if lc := newLeakChecker(cfg); (lc != nil) != (pprof.Lookup("goroutineleak") != nil) {
		t.Errorf("leak checker %v on a runtime with the profile: %v", lc != nil, pprof.Lookup("goroutineleak") != nil)
	}
	cfg.leakCheck = 0
	if newLeakChecker(cfg) != nil {
		t.Errorf("a leak checker with the option at 0")
	}
	for _, d := range []time.Duration{time.Second, 59 * time.Second, -time.Minute} {
		if _, err := Start(t.Context(), WithLeakCheckInterval(d)); err == nil {
			t.Errorf("WithLeakCheckInterval(%v) accepted", d)
		}
	}
}
