package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"sync/atomic"
	"testing"
	"time"
)

// newPprofMux registers the real net/http/pprof handlers on a private mux.
func newPprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	mux.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	return mux
}

// newPprofServer serves the pprof mux, under prefix (stripped with
// http.StripPrefix, as a service mounting pprof under a prefix must) unless
// prefix is "".
func newPprofServer(t testing.TB, prefix string) *httptest.Server {
	t.Helper()
	var h http.Handler = newPprofMux()
	if prefix != "" {
		outer := http.NewServeMux()
		outer.Handle(prefix+"/", http.StripPrefix(prefix, h))
		h = outer
	}
	return newServer(t, h)
}

func newServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// counted counts the requests that reach h.
func counted(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

// newClient is New with a test's defaults: fast retries.
func newClient(t testing.TB, rawURL string, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithRetries(3, time.Millisecond)}, opts...)
	c, err := New(rawURL, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", rawURL, err)
	}
	return c
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
