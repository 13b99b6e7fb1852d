package recorder

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// lockedBuffer is a bytes.Buffer for a logger that several goroutines use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNoWarningAtNormalEnd ends a watch while a scrape is in flight (the service's first heap
// profile takes until the request is cancelled): the scrape memdoctor cancels itself is no
// failure to warn about.
func TestNoWarningAtNormalEnd(t *testing.T) {
	var heaps atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		if heaps.Add(1) == 1 && r.URL.Query().Get("debug") == "" {
			<-r.Context().Done() // the first heap profile never comes
			return
		}
		pprof.Handler("heap").ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var logs lockedBuffer
	cfg := watchConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if _, err := Watch(context.Background(), cfg, srv.URL); err != nil {
		t.Fatal(err)
	}
	if heaps.Load() < 2 {
		t.Fatalf("%d heap requests: the test did not cancel a scrape in flight", heaps.Load())
	}
	out := logs.String()
	if strings.Contains(out, "context canceled") || strings.Contains(out, "level=WARN") {
		t.Errorf("a normal end logged a failure:\n%s", out)
	}
}

// TestNoWarningAtNormalEndAgent: the same with an agent whose third metrics request never
// answers until memdoctor ends the watch.
func TestNoWarningAtNormalEndAgent(t *testing.T) {
	a := startAgent(t)
	var metrics atomic.Int32
	h := a.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/metrics") && metrics.Add(1) == 3 {
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	var logs lockedBuffer
	cfg := watchConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if _, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/"); err != nil {
		t.Fatal(err)
	}
	if metrics.Load() < 4 {
		t.Fatalf("%d metrics requests: the test did not cancel one in flight", metrics.Load())
	}
	out := logs.String()
	if strings.Contains(out, "context canceled") || strings.Contains(out, "level=WARN") {
		t.Errorf("a normal end logged a failure:\n%s", out)
	}
}
