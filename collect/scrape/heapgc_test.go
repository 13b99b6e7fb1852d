package scrape

import (
	"errors"
	"net/http"
	"net/http/pprof"
	"runtime/metrics"
	"sync/atomic"
	"testing"
)

// TestHeapAfterGC: the request asks for gc=1, and net/http/pprof runs a GC for it (the test's
// own runtime counts one more forced cycle).
func TestHeapAfterGC(t *testing.T) {
	var query atomic.Value
	mux := http.NewServeMux() // the heap profile alone, served as the test wants
	mux.Handle("/debug/pprof/heap", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query.Store(r.URL.RawQuery)
		pprof.Handler("heap").ServeHTTP(w, r)
	}))
	c := newClient(t, newServer(t, mux).URL)
	before := forcedGCs()
	raw, p, err := c.HeapAfterGC(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := query.Load().(string); q != "gc=1" {
		t.Errorf("query %q, want gc=1", q)
	}
	if len(raw) == 0 || len(p.SampleType) != 4 {
		t.Errorf("%d bytes, sample types %v: want a heap profile", len(raw), p.SampleType)
	}
	if after := forcedGCs(); after <= before {
		t.Errorf("forced GC cycles %d -> %d: the request ran no GC", before, after)
	}
}

// TestHeapAfterGCOneAttemptAndType: a failed fetch is not retried (each attempt would cost the
// target a GC), and a profile of another type is refused.
func TestHeapAfterGCOneAttemptAndType(t *testing.T) {
	var hits atomic.Int64
	mux := http.NewServeMux() // the heap profile alone, served as the test wants
	mux.Handle("/debug/pprof/heap", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		pprof.Handler("goroutine").ServeHTTP(w, r) // not a heap profile
	}))
	c := newClient(t, newServer(t, mux).URL)
	if _, _, err := c.HeapAfterGC(testContext(t)); err == nil || hits.Load() != 1 {
		t.Errorf("on a 503: %v after %d request(s); want an error after one", err, hits.Load())
	}
	if _, _, err := c.HeapAfterGC(testContext(t)); !errors.Is(err, ErrUnexpectedProfile) {
		t.Errorf("a goroutine profile served as the heap's: %v", err)
	}
}

func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
