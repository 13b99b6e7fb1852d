package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// TestAskGC: a look that finds a verdict waiting on a reading of the live heap asks the
// service's pprof for one GC (heap?gc=1), stores its heap profile and counts it in the costs;
// at most one per interval; none when nothing waits, when the service's own GC ran within the
// interval, or when the live heap's GC would cost more than --request-gc; never without pprof.
func TestAskGC(t *testing.T) {
	var asks atomic.Int64
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/heap", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") == "1" {
			asks.Add(1)
		}
		pprof.Handler("heap").ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := scrape.New(srv.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	w, err := session.Create(dir, session.Manifest{Mode: "watch"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Interval: 5 * time.Second, Sample: time.Second, RequestGC: DefaultRequestGC}
	cfg.defaults()
	r := newRecorder(cfg, w)
	ctx := context.Background()
	t0 := time.Now()
	r.liveHeap = 40 << 20 // about 40 ms of a GC's work: within the budget

	if r.askGC(ctx, "heap-leak suspected", t0) {
		t.Error("asked without pprof")
	}
	r.setPprof(c)
	if r.askGC(ctx, "", t0) || asks.Load() != 0 {
		t.Error("asked with nothing waiting")
	}
	if !r.askGC(ctx, "heap-leak suspected", t0) || asks.Load() != 1 {
		t.Fatalf("no GC asked for a suspected heap leak: %d asked", asks.Load())
	}
	if r.askGC(ctx, "heap-leak suspected", t0.Add(3*time.Second)) || asks.Load() != 1 {
		t.Error("a second GC within the interval")
	}
	// The GC asked moved the count (read at the next sample): not the service's own.
	r.mu.Lock()
	r.gcCountRead(11, 41<<20, time.Now())
	r.mu.Unlock()
	if !r.askGC(ctx, "heap-leak suspected", t0.Add(5*time.Second)) || asks.Load() != 2 {
		t.Errorf("the GC memdoctor asked for was taken for the service's own: %d asked", asks.Load())
	}
	// The service's own GC, well after the last one asked: its reading is as fresh.
	r.mu.Lock()
	r.gcCountRead(12, 42<<20, t0.Add(9*time.Second))
	r.mu.Unlock()
	if r.askGC(ctx, "heap-leak suspected", t0.Add(10*time.Second)) || asks.Load() != 2 {
		t.Error("asked though the service's own GC had just run")
	}
	r.mu.Lock()
	r.liveHeap = 512 << 20 // half a second of a GC's work: over the 100 ms budget
	r.mu.Unlock()
	if r.askGC(ctx, "heap-leak suspected", t0.Add(20*time.Second)) || asks.Load() != 2 {
		t.Error("asked on a heap whose GC costs more than --request-gc")
	}
	r.noteGCAsks()
	r.flushManifest()
	if err := w.Close(session.StatusComplete, ""); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cost *session.Cost
	for i := range s.Manifest.Costs {
		if s.Manifest.Costs[i].Data == session.DataHeapAfterGC {
			cost = &s.Manifest.Costs[i]
		}
	}
	if cost == nil || cost.Reads != 2 || cost.Source != session.SourcePprof {
		t.Errorf("costs %+v: want the two GCs asked of pprof", s.Manifest.Costs)
	}
	heaps := 0
	for _, p := range s.Profiles {
		if p.Kind == session.KindHeap {
			heaps++
		}
	}
	if heaps != 2 || !noted(s, "asked the service for 2 GC(s)") || !noted(s, "would cost the service more than 100ms") {
		t.Errorf("%d heap profiles, notes %q: want the two GCs' profiles and notes of what was asked and what was not", heaps, s.Manifest.Notes)
	}
}

// noted reports whether a note of the session says part.
func noted(s *session.Session, part string) bool {
	return slices.ContainsFunc(s.Manifest.Notes, func(n string) bool { return strings.Contains(n, part) })
}

// TestAskGCAtAttach: the first reading of the service's GC count, taken as the watch
// attaches, is no GC seen to run: its last cycle ran before, up to a GC period earlier. Taken
// for the service's own GC having just run, it kept the first look from asking for a GC for
// an interval (span-queue-leak attached after a minute: the first GC asked at 6.4 s instead of
// 3.9 s).
func TestAskGCAtAttach(t *testing.T) {
	var asks atomic.Int64
	r, _ := gcServiceRecorder(t, &asks, Config{Interval: 5 * time.Second, Sample: time.Second, RequestGC: DefaultRequestGC})
	t0 := time.Now()
	r.mu.Lock()
	r.liveHeap = 40 << 20
	r.gcCountRead(17, 40<<20, t0) // the first sample: 17 GCs ran before the watch attached
	r.gcCountRead(17, 40<<20, t0.Add(time.Second))
	r.mu.Unlock()
	if !r.askGC(context.Background(), "heap-leak not judged yet", t0.Add(1500*time.Millisecond)) || asks.Load() != 1 {
		t.Fatalf("the first look asked for no GC (%d asked): the GC count read at attach was taken for the service's own GC", asks.Load())
	}
}

// TestLookReadsTheGCAsked: a look that asks the service for a GC has a sample taken at once
// (the reading that GC made, with the runtime's figures read for it though their pacing would
// skip them) and looks again, which may settle the watch then and there; the next look of the
// ticker comes an interval after the GC asked.
func TestLookReadsTheGCAsked(t *testing.T) {
	var asks atomic.Int64
	cfg := Config{Interval: time.Hour, Sample: time.Hour, RequestGC: DefaultRequestGC}
	looks := 0
	cfg.Settled = func() Look {
		looks++
		if looks == 1 {
			return Look{AwaitsGC: "heap-leak suspected"}
		}
		return Look{Done: true, Why: "settled: 1 finding(s) confirmed"}
	}
	r, memStats := gcServiceRecorder(t, &asks, cfg)
	r.liveHeap = 40 << 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.sampleLoop(ctx, nil) // the first sample at once, the next an hour on
	for memStats.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	ticker := time.NewTicker(time.Hour)
	defer ticker.Stop()
	var res Result
	if !r.look(ctx, &res, ticker) || res.Status != session.StatusComplete {
		t.Fatalf("the look after the GC asked did not settle the watch: %d look(s), %+v", looks, res)
	}
	if asks.Load() != 1 || looks != 2 || memStats.Load() != 2 {
		t.Errorf("%d GC(s) asked, %d look(s), %d MemStats read(s): want one GC, read at a sample of its own, and a look at it", asks.Load(), looks, memStats.Load())
	}
}

// gcServiceRecorder is a recorder of a session in a temporary directory, watching a service
// that serves net/http/pprof; asks counts the GCs asked of it (heap?gc=1), and the counter
// returned its MemStats reads (heap?debug=1).
func gcServiceRecorder(t *testing.T, asks *atomic.Int64, cfg Config) (*recorder, *atomic.Int64) {
	t.Helper()
	var memStats atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.Handle("/debug/pprof/heap", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("gc") == "1":
			asks.Add(1)
		case r.URL.Query().Get("debug") == "1":
			memStats.Add(1)
		}
		pprof.Handler("heap").ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := scrape.New(srv.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "watch"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(session.StatusComplete, "") })
	cfg.defaults()
	r := newRecorder(cfg, w)
	r.setPprof(c)
	return r, &memStats
}
