package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestMemStatsPacedByCost watches this test process through its real pprof handlers, once
// answering heap?debug=1 at once and once at a cost of 40 ms of CPU: between snapshots
// MemStats is read about every sample when it is cheap, and the reads back off with their
// cost (memStatsDuty), never past the snapshot interval; a read's wait for a CPU on a busy
// machine costs the target nothing (readCost).
func TestMemStatsPacedByCost(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	for _, tc := range []struct {
		name          string
		delay         time.Duration
		atLeast, most int64
	}{
		// 3 s at 200 ms samples, 2 s snapshots: about 15 reads on a quiet machine, fewer on a
		// loaded one (5 at load 11 when a read's wait for the CPU counted as its cost). At
		// least one read between the snapshots' two.
		{"fast", 0, 3, 40},
		// 40 ms of CPU a read: every 8 s at most, so the snapshots' reads (and the first) only.
		{"slow", 40 * time.Millisecond, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A real go1.26 heap?debug=1 body, served at once (or after the CPU spent): the pace
			// must not depend on how fast this machine prints this test's own heap.
			body, err := os.ReadFile("../../collect/scrape/testdata/heap_debug1_go1.26.txt")
			if err != nil {
				t.Fatal(err)
			}
			var reads atomic.Int64
			mux := pprofMux()
			mux.Handle("/debug/pprof/heap", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("debug") == "1" {
					reads.Add(1)
					spendCPU(tc.delay)
					w.Write(body)
					return
				}
				pprof.Handler("heap").ServeHTTP(w, r)
			}))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			cfg := watchConfig(t)
			cfg.Duration, cfg.Interval = 3*time.Second, 2*time.Second
			// The target (this process, found by its port) works, as a service does: an idle
			// one is not read between snapshots (TestIdleTargetNotRead).
			done := make(chan struct{})
			go work(done)
			_, err = Watch(context.Background(), cfg, srv.URL)
			close(done)
			if err != nil {
				t.Fatal(err)
			}
			var goSamples int64
			for _, smp := range samplesOf(t, openSession(t, cfg.Out)) {
				if smp.Go != nil && smp.Go.Source == "memstats" {
					goSamples++
				}
			}
			n := reads.Load()
			if n < tc.atLeast || n > tc.most {
				t.Errorf("%d MemStats reads in 3 s, want %d to %d", n, tc.atLeast, tc.most)
			}
			if goSamples == 0 || goSamples > n {
				t.Errorf("%d MemStats samples in the session for %d reads", goSamples, n)
			}
		})
	}
}

// work keeps a share of a core busy allocating until done is closed.
func work(done <-chan struct{}) {
	var keep [][]byte
	for {
		select {
		case <-done:
			return
		default:
		}
		keep = append(keep, make([]byte, 1<<10))
		if len(keep) > 1<<12 {
			keep = keep[:0]
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestIdleTargetNotRead: between snapshots, a target that ran less than 1% of a core since
// the last MemStats read is not read again; one that worked, or whose run time is unknown, is.
func TestIdleTargetNotRead(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	read := memStatsState{last: t0, ran: 5 * time.Second}
	for _, tc := range []struct {
		name string
		st   memStatsState
		ran  time.Duration
		now  time.Time
		want bool
	}{
		{"idle: 2 ms of run time in 1 s", read, 5*time.Second + 2*time.Millisecond, t0.Add(time.Second), true},
		{"our own reads only over 10 s", read, 5*time.Second + 60*time.Millisecond, t0.Add(10 * time.Second), true},
		{"busy: 50 ms in 1 s", read, 5*time.Second + 50*time.Millisecond, t0.Add(time.Second), false},
		{"no /proc now", read, -1, t0.Add(time.Second), false},
		{"no /proc at the last read", memStatsState{last: t0, ran: -1}, 5 * time.Second, t0.Add(time.Second), false},
		{"never read", memStatsState{}, 0, t0, false},
		{"a restarted target's clock went back", read, time.Second, t0.Add(time.Second), false},
	} {
		if got := idle(tc.st, tc.ran, tc.now); got != tc.want {
			t.Errorf("%s: idle = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStacksUnchanged: a goroutine profile is left out while the target is idle with the same
// goroutines, never past the leak check's period, and always when anything moved.
func TestStacksUnchanged(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	last := stacksState{at: t0, goroutines: 10000, ran: 5 * time.Second}
	every := 2 * time.Minute
	idleRan := 5*time.Second + 20*time.Millisecond
	working := 5*time.Second + 300*time.Millisecond
	for _, tc := range []struct {
		name       string
		st         stacksState
		goroutines int
		counted    bool // the count is read every sample
		ran        time.Duration
		now        time.Time
		want       bool
	}{
		{"idle, the same goroutines", last, 10000, false, idleRan, t0.Add(10 * time.Second), true},
		{"idle, a few goroutines more (a health check's connection)", last, 10004, false, idleRan, t0.Add(10 * time.Second), true},
		{"idle, goroutines climbing", last, 10150, false, idleRan, t0.Add(10 * time.Second), false},
		{"idle, goroutines gone", last, 9000, false, idleRan, t0.Add(10 * time.Second), false},
		{"working", last, 10000, false, working, t0.Add(10 * time.Second), false},
		{"the leak check's period passed", last, 10000, false, idleRan, t0.Add(every), false},
		{"no profile yet", stacksState{}, 10000, false, idleRan, t0.Add(10 * time.Second), false},
		{"run time unknown then", stacksState{at: t0, goroutines: 10000, ran: -1}, 10000, false, idleRan, t0.Add(10 * time.Second), false},
		{"run time unknown now", last, 10000, false, -1, t0.Add(10 * time.Second), false},
		{"a small program, 3 goroutines more", stacksState{at: t0, goroutines: 8, ran: time.Second}, 11, false, time.Second, t0.Add(10 * time.Second), true},
		// The count read every sample: a climb shows in it, whatever the target's work.
		{"counted, working, the same goroutines", last, 10000, true, working, t0.Add(10 * time.Second), true},
		{"counted, run time unknown (a remote service)", last, 10050, true, -1, t0.Add(10 * time.Second), true},
		{"counted, working, goroutines climbing", last, 10150, true, working, t0.Add(10 * time.Second), false},
		{"counted, goroutines gone", last, 9000, true, idleRan, t0.Add(10 * time.Second), false},
		{"counted, the leak check's period passed", last, 10000, true, working, t0.Add(every), false},
		{"counted, no profile yet", stacksState{}, 10000, true, working, t0.Add(10 * time.Second), false},
	} {
		if got := stacksUnchanged(tc.st, tc.goroutines, tc.counted, tc.ran, tc.now, every); got != tc.want {
			t.Errorf("%s: unchanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReadCost: a read's cost to the target is at most what its threads ran meanwhile; the
// whole time when schedstat cannot say or went back.
func TestReadCost(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name       string
		ran0, ran1 time.Duration
		want       time.Duration
	}{
		{"on the CPU all along", 100 * ms, 140 * ms, 40 * ms},
		{"other threads ran too", 100 * ms, 170 * ms, 40 * ms},
		{"mostly waiting for a CPU", 100 * ms, 104 * ms, 4 * ms},
		{"no /proc", -1, -1, 40 * ms},
		{"another process since", 100 * ms, 10 * ms, 40 * ms},
	} {
		if got := readCost(40*ms, tc.ran0, tc.ran1); got != tc.want {
			t.Errorf("%s: cost %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPaceByTheLeastRecentCost: the reads are paced by the least of the last four reads'
// costs, each an upper bound: one read charged the target's own burst does not slow the next
// ones to a snapshot interval; a read that costs more every time does.
func TestPaceByTheLeastRecentCost(t *testing.T) {
	ms, s := time.Millisecond, time.Second
	var st memStatsState
	for i, tc := range []struct {
		cost, want time.Duration
	}{
		{5 * ms, 1 * s},
		{60 * ms, 1 * s},     // charged a burst: the 5 ms read still bounds it
		{8 * ms, 1 * s},      // 5 ms
		{40 * ms, 1 * s},     // 5 ms
		{40 * ms, 1600 * ms}, // the 5 ms read is four reads old: 8 ms
		{40 * ms, 1600 * ms}, // 8 ms
		{90 * ms, 8 * s},     // 40 ms
		{90 * ms, 8 * s},     // 40 ms
		{90 * ms, 8 * s},     // 40 ms
		{90 * ms, 10 * s},    // 90 ms four times: at most the snapshot interval
	} {
		if got := st.pace(tc.cost, s, 10*s); got != tc.want {
			t.Errorf("read %d (%v): next in %v, want %v", i+1, tc.cost, got, tc.want)
		}
	}
}
