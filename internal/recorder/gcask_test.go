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
