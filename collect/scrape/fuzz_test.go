package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

func FuzzParseMemStats(f *testing.F) {
	if b, err := os.ReadFile(heapTextFile); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"# Alloc = 7\n# Sys = 9\n",
		"# Alloc = 1\n# Stack = 1 / 2\r\n# PauseNs = [1 2 3]\n# GCCPUFraction = 1e-05\n# DebugGC = true\n",
		"heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n#\t0x1\tmain.f+0x1\t/x.go:1\n\n# runtime.MemStats\n# Alloc = 5\n",
		"# Alloc = \n", "# = 1\n", "#  Alloc = 1", "# NumGC = 99999999999\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ms, err := ParseMemStats(bytes.NewReader(in))
		if err == nil && !bytes.Contains(in, []byte("# Alloc = ")) {
			t.Fatalf("parsed without a \"# Alloc = \" line: %+v", ms)
		}
		if len(ms.PauseNs) > maxPauseRing || len(ms.PauseEnd) > maxPauseRing {
			t.Fatalf("ring longer than %d", maxPauseRing)
		}
		slow, slowErr := ParseMemStats(iotest.OneByteReader(bytes.NewReader(in)))
		if (err == nil) != (slowErr == nil) || !reflect.DeepEqual(ms, slow) {
			t.Fatalf("one byte at a time: %+v, %v; at once: %+v, %v", slow, slowErr, ms, err)
		}
	})
}

func FuzzNew(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:6060", "127.0.0.1:6060", "http://h:6060/debug/pprof", "http://h:6060/debug/pprof/",
		"http://h:6060/custom/prefix/debug/pprof/", "https://u:p@h/x%2Fy", "[::1]:1", "ftp://h", "http://h:0",
		"http://h/debug/pprof/heap", "http:h:1", "", " ", "h:6060?x#y", "http://[fe80::1%25eth0]:6060",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := New(in)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, "a valid URL looks like") {
				t.Fatalf("New(%q) error is not one clear line: %q", in, msg)
			}
			return
		}
		base := c.BaseURL()
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("New(%q).BaseURL() = %q does not parse: %v", in, base, err)
		}
		if !strings.HasSuffix(u.Path, "/debug/pprof/") || (u.Scheme != "http" && u.Scheme != "https") ||
			u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("New(%q).BaseURL() = %q is not a pprof index URL", in, base)
		}
		again, err := New(base)
		if err != nil || again.BaseURL() != base {
			t.Fatalf("New(%q) is not idempotent: %q -> %v, %v", in, base, again, err)
		}
		if e := c.endpoint("heap", debug1); !strings.HasSuffix(e.Path, "/debug/pprof/heap") {
			t.Fatalf("endpoint(heap) = %q", e)
		}
	})
}

func FuzzParseHeapProfileHeader(f *testing.F) {
	for _, s := range []string{
		"heap profile: 18: 4718592 [18: 4718593] @ heap/1048576",
		"heap profile: 1: 2 [3: 4] @ heap_v2/524288", "heap profile: 1: 2 [3: 4]", "heap profile: :[:]@/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		h, err := ParseHeapProfileHeader(line)
		if err != nil {
			return
		}
		again, err := ParseHeapProfileHeader(fmt.Sprintf("heap profile: %d: %d [%d: %d] @ heap_v2/%d",
			h.InUseObjects, h.InUseBytes, h.AllocObjects, h.AllocBytes, h.MemProfileRate))
		if err != nil || again != h {
			t.Fatalf("%q -> %+v does not round-trip: %+v, %v", line, h, again, err)
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	var heap bytes.Buffer
	if err := lookupHeap(&heap); err == nil {
		f.Add(heap.Bytes())
		f.Add(heap.Bytes()[:heap.Len()/2])
	}
	for _, s := range []string{"", "<html>", "heap profile: 1: 2 [3: 4] @ heap/2\n", "\x1f\x8b", "\x0a\x04\x08\x01\x10\x02"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := parseProfile(in, pprofio.Limits{Compressed: 1 << 20, Decompressed: 1 << 20, Memory: 16 << 20})
		if err == nil {
			if p == nil {
				t.Fatal("nil profile without an error")
			}
			return
		}
		if !errors.Is(err, ErrNotProfile) && !errors.Is(err, ErrCorruptProfile) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		if strings.ContainsAny(err.Error(), "\n\x00") {
			t.Fatalf("error not sanitised: %q", err)
		}
	})
}
