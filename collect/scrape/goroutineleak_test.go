package scrape

import (
	"errors"
	"net/http"
	"net/http/pprof"
	"os"
	rpprof "runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
)

// testdata/goroutineleak_go1.27.pb.gz is a real goroutineleak profile of a go1.27.0 server
// whose fetchWithTimeout gave up waiting for seven workers, each left blocked forever
// sending on a channel nobody can reach.
const leakProfileFile = "testdata/goroutineleak_go1.27.pb.gz"

func TestGoroutineLeak(t *testing.T) {
	real, err := os.ReadFile(leakProfileFile)
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	mux := newPprofMux()
	mux.Handle("/debug/pprof/goroutineleak", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(real)
	}))
	c := newClient(t, newServer(t, mux).URL)
	raw, p, err := c.GoroutineLeak(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(real) {
		t.Errorf("raw bytes differ from what was served")
	}
	var leaked int64
	var fns []string
	for _, s := range p.Sample {
		leaked += s.Value[0]
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				fns = append(fns, l.Function.Name)
			}
		}
	}
	if leaked != 7 || !strings.Contains(strings.Join(fns, " "), "main.fetchWithTimeout.func1") {
		t.Errorf("%d leaked goroutines in %v; want 7 in main.fetchWithTimeout.func1", leaked, fns)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests, want 1", hits.Load())
	}
}

// TestGoroutineLeakNotServed: this test binary's runtime (go1.26 without the experiment)
// has no goroutineleak profile, and net/http/pprof answers 404.
func TestGoroutineLeakNotServed(t *testing.T) {
	mux := newPprofMux()
	mux.Handle("/debug/pprof/goroutineleak", pprof.Handler("goroutineleak"))
	c := newClient(t, newServer(t, mux).URL)
	_, _, err := c.GoroutineLeak(testContext(t))
	if rpprof.Lookup("goroutineleak") != nil {
		if err != nil {
			t.Errorf("this runtime has the goroutineleak profile, yet: %v", err)
		}
		return
	}
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no "goroutineleak" profile`) {
		t.Errorf("GoroutineLeak on a runtime without it: %v", err)
	}
}

// TestGoroutineLeakOneAttemptAndType: a failed fetch is not retried (each attempt would cost
// the target a GC) and a profile of another type is refused.
func TestGoroutineLeakOneAttemptAndType(t *testing.T) {
	var hits atomic.Int64
	mux := newPprofMux()
	mux.Handle("/debug/pprof/goroutineleak", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		pprof.Handler("goroutine").ServeHTTP(w, r) // not a goroutineleak profile
	}))
	c := newClient(t, newServer(t, mux).URL)
	if _, _, err := c.GoroutineLeak(testContext(t)); err == nil || hits.Load() != 1 {
		t.Errorf("on a 503: %v after %d request(s); want an error after one", err, hits.Load())
	}
	if _, _, err := c.GoroutineLeak(testContext(t)); !errors.Is(err, ErrUnexpectedProfile) || !strings.Contains(err.Error(), "goroutineleak/count") {
		t.Errorf("a goroutine profile served as goroutineleak: %v", err)
	}
}
