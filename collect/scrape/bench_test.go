package scrape

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"runtime"
	"testing"
)

// heapTextOfSize builds a heap?debug=1 body of about size bytes: the
// header of the captured page, its records repeated, its MemStats block.
func heapTextOfSize(tb testing.TB, size int) []byte {
	tb.Helper()
	text := readFile(tb, heapTextFile)
	first, rest, _ := bytes.Cut(text, []byte("\n"))
	i := bytes.Index(rest, []byte("\n# runtime.MemStats"))
	if i < 0 {
		tb.Fatalf("%s has no MemStats block", heapTextFile)
	}
	records, block := rest[:i+1], rest[i:]
	var buf bytes.Buffer
	buf.Grow(size + len(records) + len(block))
	buf.Write(first)
	buf.WriteByte('\n')
	for buf.Len() < size {
		buf.Write(records)
	}
	buf.Write(block)
	return buf.Bytes()
}

var benchSizes = []struct {
	name string
	size int
}{{"200KiB", 200 << 10}, {"2MiB", 2 << 20}, {"20MiB", 20 << 20}}

// BenchmarkParseMemStats shows that memory per parse does not grow with
// the body: compare B/op across the sizes.
func BenchmarkParseMemStats(b *testing.B) {
	for _, bs := range benchSizes {
		body := heapTextOfSize(b, bs.size)
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseMemStats(bytes.NewReader(body)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClientMemStats is the whole path: HTTP, capped body, parse. The
// server runs in the same process, so B/op includes its side too.
func BenchmarkClientMemStats(b *testing.B) {
	for _, bs := range benchSizes {
		body := heapTextOfSize(b, bs.size)
		srv := newServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
		c := newClient(b, srv.URL)
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.MemStats(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before) // a test, not a hot path
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestMemStatsBoundedMemory checks the streaming promise on a 20 MiB body:
// the parser, and the client around it, allocate a small fixed amount.
func TestMemStatsBoundedMemory(t *testing.T) {
	body := heapTextOfSize(t, 20<<20)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	c := newClient(t, srv.URL)
	ctx := testContext(t)
	if _, err := c.MemStats(ctx); err != nil { // warm the connection pool
		t.Fatal(err)
	}
	var err error
	parse := allocatedBy(func() { _, err = ParseMemStats(bytes.NewReader(body)) })
	if err != nil {
		t.Fatal(err)
	}
	client := allocatedBy(func() { _, err = c.MemStats(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 MiB heap text: ParseMemStats allocated %d bytes, Client.MemStats %d", parse, client)
	if parse > 1<<20 || client > 2<<20 {
		t.Errorf("allocated %d bytes parsing and %d bytes scraping a %d-byte body: not bounded", parse, client, len(body))
	}
}

// BenchmarkIndexHandler is what one index read costs the target: net/http/pprof.Index
// rendering the page (the counts of every registered profile) for a program with that many
// goroutines, without the HTTP transport. Compare BenchmarkGoroutineProfileHandler: the
// goroutine profile memdoctor fetches every snapshot stops the world and walks every stack.
func BenchmarkIndexHandler(b *testing.B) {
	benchHandler(b, http.HandlerFunc(pprof.Index), "/debug/pprof/")
}

func BenchmarkGoroutineProfileHandler(b *testing.B) {
	benchHandler(b, pprof.Handler("goroutine"), "/debug/pprof/goroutine")
}

func benchHandler(b *testing.B, h http.Handler, path string) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			stop := make(chan struct{})
			defer close(stop)
			for range n {
				go func() { <-stop }()
			}
			req := httptest.NewRequest(http.MethodGet, path, nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

// BenchmarkClientIndex is the whole path of one read: HTTP over loopback, parse. Client and
// server run in this process: the time is both sides'.
func BenchmarkClientIndex(b *testing.B) {
	c := newClient(b, newPprofServer(b, "").URL)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Index(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
