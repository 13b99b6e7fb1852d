package scrape

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// wantErr fails unless err wraps target and its message has every part.
func wantErr(t *testing.T, err, target error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %q does not wrap %q", err, target)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	addr := closedPort(t)
	c := newClient(t, addr, WithRetries(2, time.Millisecond))
	err := c.Probe(testContext(t))
	wantErr(t, err, ErrUnreachable, addr, "connection refused", "is it running and listening on "+addr, "(2 attempts)")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %q does not wrap ECONNREFUSED", err)
	}
	_, _, err = c.Heap(testContext(t))
	wantErr(t, err, ErrUnreachable, "http://"+addr+"/debug/pprof/heap")
}

func TestProbeNotFound(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, counted(&n, http.NotFoundHandler()))
	err := newClient(t, srv.URL).Probe(testContext(t))
	wantErr(t, err, ErrNotFound, srv.URL+"/debug/pprof/", "HTTP 404", `import _ "net/http/pprof"`)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Errorf("error %v is not a *StatusError with code 404", err)
	}
	if n.Load() != 1 {
		t.Errorf("a 404 was retried: %d requests", n.Load())
	}
}

func TestUnknownProfile(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, counted(&n, newPprofMux()))
	_, _, err := newClient(t, srv.URL).Profile(testContext(t), "nosuch", nil)
	wantErr(t, err, ErrNotFound, srv.URL+"/debug/pprof/nosuch", `has no "nosuch" profile`)
	if n.Load() != 1 {
		t.Errorf("a 404 was retried: %d requests", n.Load())
	}
}

const loginPage = `<!DOCTYPE html>
<html><head><title>Sign in</title></head>
<body><form action="/login">please sign in to continue to the dashboard</form></body></html>`

func TestHTMLInsteadOfProfile(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, counted(&n, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, loginPage)
	})))
	c := newClient(t, srv.URL)
	_, _, err := c.Heap(testContext(t))
	wantErr(t, err, ErrNotProfile, srv.URL+"/debug/pprof/heap", "HTML page",
		`"<!DOCTYPE html> <html><head><title>Sign in</title></head> <…"`)
	if n.Load() != 1 {
		t.Errorf("a non-profile body was retried: %d requests", n.Load())
	}

	err = c.Probe(testContext(t))
	wantErr(t, err, ErrNotPprof, srv.URL+"/debug/pprof/", `"<!DOCTYPE html>`)
	_, err = c.MemStats(testContext(t))
	wantErr(t, err, ErrNoMemStats, "heap?debug=1", `"<!DOCTYPE html>`)
	_, err = c.GoroutineText(testContext(t))
	wantErr(t, err, ErrNotProfile, "goroutine?debug=1", "HTML page")
}

func TestSnippetBounded(t *testing.T) {
	for _, in := range []string{loginPage, strings.Repeat("é", 100), "\x00\x01binary\xff\xfe", "  short  ", ""} {
		s := snippet([]byte(in))
		if got := len([]rune(s)) - 2; got > snippetMax {
			t.Errorf("snippet(%.20q) = %s: %d characters, want <= %d", in, s, got, snippetMax)
		}
		if strings.ContainsAny(s, "\n\x00") {
			t.Errorf("snippet(%.20q) = %s is not sanitised", in, s)
		}
	}
	if s := snippet([]byte("\x00\x01ok\xff")); s != `"..ok."` {
		t.Errorf("snippet of binary = %s", s)
	}
}

// heapProfileBytes is a real gzipped heap profile of this process.
func heapProfileBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := lookupHeap(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func lookupHeap(w io.Writer) error {
	return pprof.Lookup("heap").WriteTo(w, 0)
}

func serveBytes(n *atomic.Int64, body []byte) http.Handler {
	return counted(n, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
	}))
}

func TestTruncatedGzip(t *testing.T) {
	full := heapProfileBytes(t)
	var n atomic.Int64
	srv := newServer(t, serveBytes(&n, full[:len(full)/2]))
	_, _, err := newClient(t, srv.URL).Heap(testContext(t))
	wantErr(t, err, ErrCorruptProfile, srv.URL+"/debug/pprof/heap", "truncated gzip")
	if n.Load() != 1 {
		t.Errorf("a corrupt profile was retried: %d requests", n.Load())
	}
}

func TestCorruptProtobuf(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, serveBytes(&n, []byte{0x0a, 0x7f, 0x08, 0x01}))
	_, _, err := newClient(t, srv.URL).Profile(testContext(t), "heap", nil)
	wantErr(t, err, ErrCorruptProfile, "decoding the protobuf")
}

// countingTransport counts the body bytes the client reads off the wire.
type countingTransport struct {
	read atomic.Int64
}

func (ct *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &ct.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func TestBodyTooLarge(t *testing.T) {
	const limit = 4096
	big := bytes.Repeat([]byte("x"), 1<<20)
	chunked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < len(big); i += 8192 {
			w.Write(big[i : i+8192])
			w.(http.Flusher).Flush() // no Content-Length
		}
	})
	var n atomic.Int64
	for name, h := range map[string]http.Handler{"content-length": serveBytes(&n, big), "chunked": chunked} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, h)
			ct := &countingTransport{}
			c := newClient(t, srv.URL, WithMaxBodyBytes(limit), WithHTTPClient(&http.Client{Transport: ct}))
			ctx := testContext(t)
			_, _, err := c.Heap(ctx)
			wantErr(t, err, ErrTooLarge, srv.URL+"/debug/pprof/heap", "4 KiB")
			_, err = c.GoroutineText(ctx)
			wantErr(t, err, ErrTooLarge, "goroutine?debug=1")
			_, err = c.MemStats(ctx)
			wantErr(t, err, ErrTooLarge, "heap?debug=1")
			// Three requests; drainClose may read up to 64 KiB more of
			// each, to reuse the connection, but nothing is kept.
			if got := ct.read.Load(); got > 3*(limit+1+64<<10+32<<10) {
				t.Errorf("read %d bytes for three capped requests", got)
			}
		})
	}
}

func TestGzipBomb(t *testing.T) {
	full := heapProfileBytes(t)
	var n atomic.Int64
	srv := newServer(t, serveBytes(&n, full))
	// The body fits; the decompressed profile does not.
	c := newClient(t, srv.URL, WithMaxBodyBytes(int64(len(full))+10))
	if _, _, err := c.Heap(testContext(t)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "decompressing") {
		t.Fatalf("Heap error = %v, want ErrTooLarge while decompressing", err)
	}
}

// blockingServer serves a minimal pprof index at /debug/pprof/ at once; on
// any other path it writes head (nothing when empty) and blocks until the
// client goes away or the test ends.
func blockingServer(t *testing.T, n *atomic.Int64, head string) string {
	release := make(chan struct{})
	srv := newServer(t, counted(n, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/pprof/" {
			io.WriteString(w, `<a href='goroutine?debug=1'>goroutine</a><a href='heap?debug=1'>heap</a>`)
			return
		}
		if head != "" {
			io.WriteString(w, head)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})))
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv.URL
}

// warmTransport returns a transport with a connection to url already
// open, so that a short timeout cannot be blamed on a slow dial.
func warmTransport(t *testing.T, url string) *http.Transport {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := newClient(t, url, WithHTTPClient(&http.Client{Transport: tr}), WithTimeout(time.Minute))
	if err := c.Probe(testContext(t)); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return tr
}

// warmClient is a client over a warm transport.
func warmClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	tr := warmTransport(t, url)
	return newClient(t, url, append(opts, WithHTTPClient(&http.Client{Transport: tr}))...)
}

func TestTimeoutNoResponse(t *testing.T) {
	var n atomic.Int64
	url := blockingServer(t, &n, "")
	c := warmClient(t, url, WithTimeout(100*time.Millisecond))
	_, _, err := c.Heap(testContext(t))
	wantErr(t, err, ErrTimeout, url+"/debug/pprof/heap", "connected, but no response within 100ms")
	if errors.Is(err, ErrUnreachable) {
		t.Errorf("a connected but silent service is reported unreachable: %v", err)
	}
	if n.Load() != 2 {
		t.Errorf("a timeout was retried: %d requests after the probe, want 1", n.Load()-1)
	}
}

func TestHTTPClientTimeout(t *testing.T) {
	var n atomic.Int64
	url := blockingServer(t, &n, "")
	hc := &http.Client{Transport: warmTransport(t, url), Timeout: 100 * time.Millisecond}
	_, _, err := newClient(t, url, WithHTTPClient(hc), WithTimeout(time.Minute)).Heap(testContext(t))
	wantErr(t, err, ErrTimeout, "no response before a dialer or HTTP client timeout")
	if n.Load() != 2 {
		t.Errorf("a timeout was retried: %d requests after the probe, want 1", n.Load()-1)
	}
}

func TestTimeoutStalledBody(t *testing.T) {
	var n atomic.Int64
	url := blockingServer(t, &n, "# partial heap text\n")
	c := warmClient(t, url, WithTimeout(time.Second))
	_, err := c.MemStats(testContext(t))
	wantErr(t, err, ErrTimeout, "heap?debug=1", "body was not complete within 1s (20 bytes read)")
}

func TestCallerContext(t *testing.T) {
	var n atomic.Int64
	url := blockingServer(t, &n, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := newClient(t, url).Heap(ctx)
	wantErr(t, err, context.Canceled, url)
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnreachable) {
		t.Errorf("a cancelled call is reported as a timeout or unreachable: %v", err)
	}
}

func TestBearerToken(t *testing.T) {
	mux := newPprofMux()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	err := newClient(t, srv.URL).Probe(testContext(t))
	wantErr(t, err, nil, "HTTP 401", "bearer token", `"unauthorized"`)
	if err := newClient(t, srv.URL, WithBearerToken("s3cret")).Probe(testContext(t)); err != nil {
		t.Errorf("Probe with the token: %v", err)
	}
}

func TestProfileQueryRefused(t *testing.T) {
	var n atomic.Int64
	srv := newServer(t, counted(&n, newPprofMux()))
	c := newClient(t, srv.URL)
	for _, q := range []map[string][]string{
		{"gc": {"1"}},
		{"debug": {"1"}},
		{"seconds": {"-3"}},
		{"seconds": {"abc"}},
	} {
		_, _, err := c.Profile(testContext(t), "heap", q)
		wantErr(t, err, nil, srv.URL)
	}
	for _, name := range []string{"", "../secret", "a/../../b", "heap?debug=1", "/heap"} {
		if _, _, err := c.Profile(testContext(t), name, nil); err == nil {
			t.Errorf("Profile(%q) succeeded", name)
		}
	}
	if n.Load() != 0 {
		t.Errorf("refused queries reached the server: %d requests", n.Load())
	}
}
