package scrape

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// allocated returns the bytes fn allocates (the test server's included: it writes from
// memory it already holds).
func allocated(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// chunkedHandler writes body in 32 KiB writes, flushed: no Content-Length, as
// net/http/pprof serves anything large.
func chunkedHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for len(body) > 0 {
			n := min(len(body), 32<<10)
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	})
}

// TestGoroutineTextCost reads a 48 MiB goroutine dump served without a Content-Length: it
// costs its size plus one chunk, not the two to three times its size of a growing buffer.
func TestGoroutineTextCost(t *testing.T) {
	text := append([]byte("goroutine profile: total 1\n"), bytes.Repeat([]byte("1 @ 0x401000 0x402000\n#\t0x401000\tmain.f+0x10\t/src/main.go:10\n"), 48<<20/64)...)
	srv := newServer(t, chunkedHandler(text))
	c := newClient(t, srv.URL)
	var body *Body
	var err error
	alloc := allocated(func() { body, err = c.GoroutineText(testContext(t)) })
	if err != nil {
		t.Fatal(err)
	}
	if body.Len() != int64(len(text)) || !bytes.Equal(body.Bytes(), text) {
		t.Fatalf("read %d bytes, want the %d served", body.Len(), len(text))
	}
	if limit := int64(len(text)) + maxChunk + 2<<20; alloc > limit {
		t.Errorf("reading %d MiB allocated %d MiB, more than %d", len(text)>>20, alloc>>20, limit>>20)
	}
}

// TestGoroutineTextToStreams streams a 48 MiB goroutine dump into a file: it costs almost
// nothing in memory, and a body that is not a dump never opens the writer.
func TestGoroutineTextToStreams(t *testing.T) {
	text := append([]byte("goroutine profile: total 1\n"), bytes.Repeat([]byte("1 @ 0x401000 0x402000\n#\t0x401000\tmain.f+0x10\t/src/main.go:10\n"), 48<<20/64)...)
	srv := newServer(t, chunkedHandler(text))
	c := newClient(t, srv.URL)
	f, err := os.Create(filepath.Join(t.TempDir(), "g.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	alloc := allocated(func() {
		n, err = c.GoroutineTextTo(testContext(t), func() (io.Writer, error) { return f, nil })
	})
	if err != nil || n != int64(len(text)) {
		t.Fatalf("wrote %d bytes (%v), want %d", n, err, len(text))
	}
	if got, _ := os.ReadFile(f.Name()); !bytes.Equal(got, text) {
		t.Errorf("the file is not the dump")
	}
	if alloc > 2<<20 {
		t.Errorf("streaming %d MiB allocated %d KiB", len(text)>>20, alloc>>10)
	}

	page := newServer(t, chunkedHandler([]byte("<html><body>login</body></html>")))
	opened := false
	_, err = newClient(t, page.URL).GoroutineTextTo(testContext(t), func() (io.Writer, error) { opened = true; return io.Discard, nil })
	wantErr(t, err, ErrNotProfile, "HTML page")
	if opened {
		t.Errorf("the writer was opened for an HTML page")
	}
}

// TestHostileHeapBodies serves gzip bombs and a valid profile dense with tiny samples as the
// heap profile: each is refused as too large, at a bounded cost.
func TestHostileHeapBodies(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 16) // 1 GiB in 1 MiB
	forged := bytes.Clone(bomb)
	binary.LittleEndian.PutUint32(forged[len(forged)-4:], 100)
	dense := []byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x01, 'x', 0x32, 0x01, 'y', 0x22, 0x02, 0x08, 0x01}
	for len(dense) < 16<<20 {
		dense = append(dense, 0x12, 0x06, 0x0a, 0x01, 0x01, 0x12, 0x01, 0x01) // one-frame samples
	}
	var gz bytes.Buffer
	zw = gzip.NewWriter(&gz)
	zw.Write(dense)
	zw.Close()
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		{"bomb", bomb, "decompresses to more than 32 MiB"},
		{"bomb with a forged trailer", forged, "decompresses to more than 32 MiB"},
		{"dense samples", gz.Bytes(), "parsing it would take about 480 MiB, more than 128 MiB"},
	} {
		srv := newServer(t, chunkedHandler(tc.body))
		c := newClient(t, srv.URL)
		var err error
		alloc := allocated(func() { _, _, err = c.Heap(testContext(t)) })
		wantErr(t, err, ErrTooLarge, "/debug/pprof/heap", tc.msg)
		if limit := int64(2*64<<20 + 2*len(tc.body) + 8<<20); alloc > limit {
			t.Errorf("%s: allocated %d MiB, more than %d", tc.name, alloc>>20, limit>>20)
		}
	}
}
