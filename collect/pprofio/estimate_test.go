package pprofio

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/pprof/profile"
)

// allocated returns the bytes profile.ParseData allocates to parse data, and its error.
func allocated(data []byte) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := profile.ParseData(data)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	return after.TotalAlloc - before.TotalAlloc, err
}

// TestEstimateBoundsAllocation checks Estimate against what profile.ParseData allocates
// (every allocation, garbage included) on the densest profiles of each kind of message, on
// the legacy formats and on real profiles: the estimate must never be below it, and not
// far above it (or real profiles would be refused for nothing).
func TestEstimateBoundsAllocation(t *testing.T) {
	const n = 256 << 10
	shapes := append(protoShapes(n), legacyShapes(n)...)
	for _, name := range realProfiles(t) {
		data, err := Default.ReadFileData(name)
		if err != nil {
			t.Fatal(err)
		}
		shapes = append(shapes, shape{"real " + filepath.Base(name), data})
	}
	for _, s := range shapes {
		got, err := allocated(s.data)
		if err != nil {
			t.Errorf("%s: %v", s.name, err)
			continue
		}
		est := Estimate(s.data)
		ratio := float64(est) / float64(got)
		t.Logf("%-40s %8d bytes: allocates %9d (%5.1f/byte), estimate %9d (%.2fx)", s.name, len(s.data), got, float64(got)/float64(len(s.data)), est, ratio)
		if est < int64(got) {
			t.Errorf("%s: estimate %d, below the %d bytes allocated", s.name, est, got)
		}
		if est > 5*int64(got)+legacyProbe+64<<10 {
			t.Errorf("%s: estimate %d, %.1f times the %d bytes allocated", s.name, est, ratio, got)
		}
	}
}

// realProfiles lists the real profiles in testdata.
func realProfiles(t *testing.T) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir("testdata/real")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".tsv" {
			out = append(out, filepath.Join("testdata/real", e.Name()))
		}
	}
	return out
}
