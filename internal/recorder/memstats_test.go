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
// answering heap?debug=1 at once and once slowly: between snapshots MemStats is read about
// every sample when it is cheap, and the reads back off with their cost (memStatsDuty),
// never past the snapshot interval.
func TestMemStatsPacedByCost(t *testing.T) {
	for _, tc := range []struct {
		name          string
		delay         time.Duration
		atLeast, most int64
	}{
		// 3 s at 200 ms samples, 2 s snapshots: about 15 reads; a loaded machine makes fewer.
		{"fast", 0, 6, 40},
		// 40 ms a read: every 8 s at most, so the snapshots' reads (and the first) only.
		{"slow", 40 * time.Millisecond, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A real go1.26 heap?debug=1 body, served at once (or after the delay): the pace
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
					time.Sleep(tc.delay)
					w.Write(body)
					return
				}
				pprof.Handler("heap").ServeHTTP(w, r)
			}))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			cfg := watchConfig(t)
			cfg.Duration, cfg.Interval = 3*time.Second, 2*time.Second
			if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
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
