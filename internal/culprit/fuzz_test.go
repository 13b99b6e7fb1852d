package culprit

import (
	"bytes"
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
		f.Add(data)
		// A truncated dump, as writeGoroutineStacks leaves past 64 MB.
		f.Add(data[:len(data)/2])
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
		// Streaming must not depend on how the input is split into reads.
		again, err := ParseGoroutineText(iotest.OneByteReader(bytes.NewReader(data)), opts)
		if err != nil || !reflect.DeepEqual(groups, again) {
			t.Errorf("reading byte by byte gave a different result (%v)", err)
		}
	})
}
