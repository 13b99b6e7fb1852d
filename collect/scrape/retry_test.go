package scrape

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// flaky answers the first fails requests with status, then serves the real
// pprof mux.
func flaky(n *atomic.Int64, fails int64, status int) http.Handler {
	mux := newPprofMux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= fails {
			http.Error(w, "try later", status)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func TestRetryThenSuccess(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusBadGateway} {
		var n atomic.Int64
		srv := newServer(t, flaky(&n, 2, status))
		_, _, err := newClient(t, srv.URL, WithRetries(3, time.Millisecond)).Heap(testContext(t))
		if err != nil {
			t.Errorf("HTTP %d twice then 200: %v", status, err)
		}
		if n.Load() != 3 {
			t.Errorf("HTTP %d twice then 200: %d attempts, want 3", status, n.Load())
		}
	}
}

func TestRetriesExhausted(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, flaky(&n, 100, http.StatusServiceUnavailable))
	_, _, err := newClient(t, srv.URL, WithRetries(4, time.Millisecond)).Heap(testContext(t))
	wantErr(t, err, nil, "HTTP 503", `"try later"`, "(4 attempts)")
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("error %v is not a *StatusError 503", err)
	}
	if n.Load() != 4 {
		t.Errorf("%d attempts, want 4", n.Load())
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusBadRequest} {
		var n atomic.Int64
		srv := newServer(t, flaky(&n, 100, status))
		_, _, err := newClient(t, srv.URL, WithRetries(5, time.Millisecond)).Heap(testContext(t))
		if err == nil || n.Load() != 1 {
			t.Errorf("HTTP %d: %d attempts (want 1), error %v", status, n.Load(), err)
		}
	}
}

func TestRetryWhenConnectionDropsMidBody(t *testing.T) {
	var n atomic.Int64
	mux := newPprofMux()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Promise 100000 bytes, send 10, and drop the connection.
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte("\x1f\x8b partial"))
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		mux.ServeHTTP(w, r)
	}))
	if _, _, err := newClient(t, srv.URL).Heap(testContext(t)); err != nil {
		t.Fatalf("Heap after a dropped connection: %v", err)
	}
	if n.Load() != 2 {
		t.Errorf("%d attempts, want 2", n.Load())
	}
}

func TestDroppedConnectionExhausted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var n atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			conn.Close() // accept and hang up: no HTTP response
		}
	}()
	_, _, err = newClient(t, ln.Addr().String(), WithRetries(2, time.Millisecond)).Heap(testContext(t))
	wantErr(t, err, ErrUnreachable, "connection failed before a response", "(2 attempts)")
}

func TestRetryDelay(t *testing.T) {
	c := &Client{backoff: 100 * time.Millisecond}
	for _, tc := range []struct {
		attempt  int
		after    time.Duration
		min, max time.Duration
	}{
		{1, 0, 75 * time.Millisecond, 125 * time.Millisecond},
		{2, 0, 150 * time.Millisecond, 250 * time.Millisecond},
		{3, 0, 300 * time.Millisecond, 500 * time.Millisecond},
		{1, 2 * time.Second, 2 * time.Second, 2 * time.Second},
		{40, 0, maxBackoff * 3 / 4, maxBackoff * 5 / 4},
		{1, time.Hour, maxBackoff, maxBackoff},
	} {
		for range 50 {
			if d := c.retryDelay(tc.attempt, tc.after); d < tc.min || d > tc.max {
				t.Fatalf("retryDelay(%d, %v) = %v, want within [%v, %v]", tc.attempt, tc.after, d, tc.min, tc.max)
			}
		}
	}
	if d := (&Client{}).retryDelay(3, 0); d != 0 {
		t.Errorf("zero backoff gave %v", d)
	}
}

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0":                             0,
		"-5":                            0,
		"999999":                        maxBackoff,
		"soon":                          0,
		"Mon, 02 Jan 2006 15:04:05 GMT": 0, // in the past
	} {
		resp := &http.Response{Header: http.Header{"Retry-After": {v}}}
		if got := retryAfter(resp); got != want {
			t.Errorf("Retry-After %q = %v, want %v", v, got, want)
		}
	}
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := retryAfter(&http.Response{Header: http.Header{"Retry-After": {future}}}); got != maxBackoff {
		t.Errorf("Retry-After in an hour = %v, want the cap %v", got, maxBackoff)
	}
}

func TestSecondsLengthensTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query map[string][]string
		extra time.Duration
	}{
		{"heap", nil, 0},
		{"heap", map[string][]string{"seconds": {"30"}}, 30 * time.Second},
		{"profile", nil, 30 * time.Second},
		{"profile", map[string][]string{"seconds": {"5"}}, 5 * time.Second},
		{"allocs", map[string][]string{"debug": {"0"}}, 0},
	} {
		extra, err := checkProfileQuery(tc.name, tc.query)
		if err != nil || extra != tc.extra {
			t.Errorf("checkProfileQuery(%s, %v) = %v, %v; want %v", tc.name, tc.query, extra, err, tc.extra)
		}
	}
	if _, err := checkProfileQuery("heap", map[string][]string{"gc": {"1"}}); err == nil || !strings.Contains(err.Error(), "garbage collection") {
		t.Errorf("gc=1 was not refused: %v", err)
	}
}
