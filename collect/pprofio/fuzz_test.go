package pprofio

import (
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// fuzzSeeds adds small profiles of every shape, the legacy formats and the real profiles.
func fuzzSeeds(f *testing.F) {
	for _, s := range append(protoShapes(256), legacyShapes(256)...) {
		f.Add(s.data)
	}
	for _, name := range []string{"testdata/real/node_exporter_goroutine.pb.gz", "testdata/real/gobench_legacy_text.heap", "testdata/real/goroutine_small_req2.pb"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse: no input panics, what parses is valid, and no input makes reading allocate
// more than the limits allow (twice the decompressed limit for the buffer, the memory
// limit for parsing).
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	lim := Limits{Compressed: 1 << 20, Decompressed: 4 << 20, Memory: 16 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *profile.Profile
		var err error
		alloc := allocatedBy(func() { p, err = lim.Parse("fuzz", data) })
		if err == nil {
			if verr := p.CheckValid(); verr != nil {
				t.Errorf("parsed an invalid profile: %v", verr)
			}
		}
		if max := 2*lim.Decompressed + lim.Memory + 1<<20; int64(alloc) > max {
			t.Errorf("allocated %d bytes, more than %d (%v)", alloc, max, err)
		}
	})
}

// FuzzEstimate: the estimate is never below what profile.ParseData allocates.
func FuzzEstimate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if isGzip(data) {
			return // ParseData would gunzip: Limits.ParseData refuses it
		}
		est := Estimate(data)
		alloc := allocatedBy(func() { profile.ParseData(data) })
		if int64(alloc) > est {
			t.Errorf("ParseData allocated %d bytes, the estimate is %d", alloc, est)
		}
	})
}
