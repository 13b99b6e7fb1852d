package culprit

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func FuzzParseGoroutineText(f *testing.F) {
	// Seeds: dumps captured from real goroutines (testdata, see
	// TestGoroutineGroupsLive -capture), a fresh capture of this process, and
	// the hand-written variants.
	for _, name := range []string{"goroutines.debug1.txt", "goroutines.debug2.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		// Their first records, whole: the whole files are golden tests, and the fuzzer
		// mutates a small input many times faster than a 20 KB one.
		head := data[:min(len(data), 2048)]
		head = head[:bytes.LastIndex(head, []byte("\n\n"))+2]
		f.Add(head)
		// A truncated dump, cut within a line, as writeGoroutineStacks leaves past 64 MB.
		f.Add(data[:min(len(data), 1000)])
	}
	f.Add(captureGoroutines(f, 1))
	f.Add(captureGoroutines(f, 2))
	f.Add([]byte(variantsDump))
	f.Add([]byte(leakDebug1))
	f.Add([]byte("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n"))

	opts := Options{MainModule: "github.com/acme/svc"}
	f.Fuzz(func(t *testing.T, data []byte) {
		groups, err := ParseGoroutineText(bytes.NewReader(data), opts)
		if err != nil {
			if groups != nil {
				t.Errorf("groups with an error")
			}
			return
		}
		keys := make(map[string]bool)
		for i, g := range groups {
			if g.Count < 1 || g.Leaked < 0 || g.Leaked > g.Count || g.WaitMinutes < 0 {
				t.Errorf("group %d: count %d leaked %d wait %d", i, g.Count, g.Leaked, g.WaitMinutes)
			}
			if keys[g.Key] {
				t.Errorf("duplicate key %q", g.Key)
			}
			keys[g.Key] = true
			if i > 0 && g.Count > groups[i-1].Count {
				t.Errorf("not sorted by count at %d", i)
			}
			if len(g.Stack) > maxFrames || g.Blocking == "" || g.Culprit.Function == "" {
				t.Errorf("group %d: %d frames, blocking %q, culprit %q", i, len(g.Stack), g.Blocking, g.Culprit.Function)
			}
			if strings.Contains(g.State, ", ") || strings.HasSuffix(g.State, " (scan)") {
				t.Errorf("annotations left in state %q", g.State)
			}
		}
		if len(groups) > maxGroups+1 {
			t.Errorf("%d groups", len(groups))
		}
		// Streaming must not depend on how the input is split into reads. Byte by byte costs
		// ten parses on a large input: beyond 512 bytes, reads of mixed sizes split it as well.
		var r io.Reader = iotest.OneByteReader(bytes.NewReader(data))
		if len(data) > 512 {
			r = &mixedReader{r: bytes.NewReader(data)}
		}
		again, err := ParseGoroutineText(r, opts)
		if err != nil || !reflect.DeepEqual(groups, again) {
			t.Errorf("reading in small pieces gave a different result (%v)", err)
		}
	})
}

// mixedReader returns reads of 1, 3, 7, 64, 509 and 4093 bytes in turn: the splits fall
// everywhere in a line, in a few hundred reads for a large dump rather than one per byte.
type mixedReader struct {
	r io.Reader
	n int
}

var mixedSizes = [...]int{1, 3, 7, 64, 509, 4093}

func (m *mixedReader) Read(p []byte) (int, error) {
	size := mixedSizes[m.n%len(mixedSizes)]
	m.n++
	return m.r.Read(p[:min(len(p), size)])
}
