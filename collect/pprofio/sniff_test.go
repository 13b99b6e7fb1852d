package pprofio

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSniffRealFiles: every real profile is told by its content: gzip outside, and inside a
// protobuf, legacy text or a goroutine dump; logs and other files are not profiles.
func TestSniffRealFiles(t *testing.T) {
	for _, c := range []struct {
		path         string
		outer, inner Format
	}{
		{"../../testdata/profiles/loki_heap_4types.pb.gz", FormatGzip, FormatProto},
		{"../../testdata/profiles/goroutine_small_req2.pb", FormatGzip, FormatProto}, // named .pb, gzipped
		{"../../testdata/profiles/gobench_legacy_text.heap", FormatLegacy, FormatLegacy},
		{"../../testdata/profiles/node_exporter_cpu_10s.pb.gz", FormatGzip, FormatProto},
		{"../../culprit/testdata/goroutines.debug1.txt", FormatGoroutineText, FormatGoroutineText},
		{"../../culprit/testdata/goroutines.debug2.txt", FormatGoroutineText, FormatGoroutineText},
		{"../../source/pprofdir/testdata/goroutine-debug2.txt.gz", FormatGzip, FormatGoroutineText},
		{"../../source/pprofdir/testdata/slow90s/app.log", FormatText, FormatText},
		{"../../README.md", FormatText, FormatText},
		{"../../report/assets/app.js", FormatText, FormatText},
		{"../../testdata/profiles/allocs_small_req5.pb", FormatGzip, FormatProto},
	} {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		head := b[:min(len(b), SniffLen)]
		if got := Sniff(head); got != c.outer {
			t.Errorf("%s: %v, want %v", filepath.Base(c.path), got, c.outer)
		}
		if c.outer == FormatGzip {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			inner := make([]byte, SniffLen)
			n, _ := io.ReadFull(zr, inner)
			head = inner[:n]
		}
		if got := Sniff(head); got != c.inner {
			t.Errorf("%s inside: %v, want %v", filepath.Base(c.path), got, c.inner)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
		want Format
	}{
		{"empty", "", FormatUnknown},
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", FormatUnknown},
		{"zeros", "\x00\x00\x00\x00", FormatUnknown},
		{"elf", "\x7fELF\x02\x01\x01", FormatUnknown},
		{"html", "<html><body>login</body></html>", FormatText},
		{"leading comments", "# saved by hand\n\nheap profile: 1: 2 [3: 4] @ heap/1048576\n", FormatLegacy},
		{"goroutineleak", "goroutineleak profile: total 3\n", FormatGoroutineText},
		{"crash", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n", FormatText},
		{"traceback", "goroutine 1 [running]:\nmain.main()\n", FormatGoroutineText},
		{"threadcreate", "threadcreate profile: total 7\n", FormatLegacy},
		{"a cut rune", "gc 1 @0.1s \xc3", FormatText},
		{"latin-1", "caf\xe9 au lait\n", FormatUnknown},
	} {
		if got := Sniff([]byte(c.data)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// FuzzSniff: no input panics, and what is not gzip, text or a protobuf's start is unknown.
func FuzzSniff(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte("goroutine 1 [running]:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Sniff(data)
		if got == FormatProto && !protoStart(data) || got >= FormatLegacy && !isText(data) {
			t.Errorf("%v for %q", got, data)
		}
	})
}
