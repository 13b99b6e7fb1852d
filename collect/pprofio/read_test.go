package pprofio

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// gzipZeros returns one gzip member holding n zero bytes.
func gzipZeros(t testing.TB, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zero) {
		zw.Write(zero[:min(left, len(zero))])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// forgeTrailer returns a copy of a gzip member whose trailer claims it holds 100 bytes.
func forgeTrailer(b []byte) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[len(b)-4:], 100)
	return b
}

// allocatedBy returns the bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileInputs reads each hostile input from memory, from a file and from a stream:
// each is refused with an error that names it and says why, and reading it allocates at
// most about twice the limit it reaches, never what the input would become.
func TestHostileInputs(t *testing.T) {
	lim := Limits{Compressed: 2 << 20, Decompressed: 8 << 20, Memory: 16 << 20}
	bomb := gzipZeros(t, 64<<20) // 64 MiB in 64 KiB
	member := gzipZeros(t, 6<<20)
	dense := gzipBytes(t, protoShapes(1 << 20)[1].data) // one-frame samples: ~31 MiB parsed per MiB
	for _, tc := range []struct {
		name, input string
		data        []byte
		err         error
		msg         string
		maxAlloc    int64 // beyond the input's size
	}{
		{"bomb", "bomb.pb.gz", bomb, ErrTooLarge, "decompresses to more than 8 MiB", 17 << 20},
		{"bomb with a forged trailer", "forged.pb.gz", forgeTrailer(bomb), ErrTooLarge, "decompresses to more than 8 MiB: memdoctor refuses larger profiles", 17 << 20},
		{"members under the limit, over it together", "members.pb.gz", bytes.Repeat(member, 3), ErrTooLarge, "decompresses to more than 8 MiB", 17 << 20},
		{"gzipped twice", "twice.pb.gz", gzipBytes(t, gzipZeros(t, 1<<30)), ErrNotProfile, "gzipped twice", 3 << 20},
		{"raw, over the compressed limit", "raw.pb", bytes.Repeat([]byte{0x0a}, 3<<20), ErrTooLarge, "more than 2 MiB", 5 << 20},
		{"gzip over the compressed limit", "big.pb.gz", gzipBytes(t, randomBytes(3<<20)), ErrTooLarge, "more than 2 MiB", 5 << 20},
		{"dense samples", "dense.pb.gz", dense, ErrTooLarge, "parsing it would take about 30.5 MiB, more than 16 MiB", 5 << 20},
		{"truncated gzip", "cut.pb.gz", dense[:1000], ErrNotProfile, "truncated gzip", 3 << 20},
		{"HTML", "page.html", []byte("<html><body>login</body></html>"), ErrNotProfile, "unrecognized profile format", 1 << 20},
		{"empty", "empty.pb.gz", nil, ErrNotProfile, "empty input file", 1 << 20},
	} {
		path := filepath.Join(t.TempDir(), tc.input)
		if err := os.WriteFile(path, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"Parse", "ReadFile", "Read"} {
			var err error
			alloc := allocatedBy(func() {
				switch how {
				case "Parse":
					_, err = lim.Parse(tc.input, tc.data)
				case "ReadFile":
					_, err = lim.ReadFileAs(tc.input, path)
				case "Read":
					_, err = lim.Read(tc.input, bytes.NewReader(tc.data))
				}
			})
			if !errors.Is(err, tc.err) || err == nil || !strings.HasPrefix(err.Error(), tc.input+": ") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s, %s: error %v; want %q, naming %s, saying %q", tc.name, how, err, tc.err, tc.input, tc.msg)
			}
			if int64(alloc) > tc.maxAlloc+int64(len(tc.data)) {
				t.Errorf("%s, %s: allocated %d bytes, more than %d", tc.name, how, alloc, tc.maxAlloc)
			}
		}
	}
}

// TestBombWithTrailer: a bomb whose gzip trailer tells its size is confirmed by streaming,
// without holding what it decompresses to.
func TestBombWithTrailer(t *testing.T) {
	lim := Limits{Compressed: 2 << 20, Decompressed: 8 << 20, Memory: 16 << 20}
	bomb := gzipZeros(t, 64<<20)
	alloc := allocatedBy(func() { _, err := lim.Parse("bomb.pb.gz", bomb); _ = err })
	if alloc > 1<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// TestRealProfiles reads every real profile in testdata with the default limits and gets
// what profile.Parse gets.
func TestRealProfiles(t *testing.T) {
	for _, path := range realProfiles(t) {
		got, err := Default.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		f, _ := os.Open(path)
		want, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Sample) != len(want.Sample) || len(got.Location) != len(want.Location) || got.String() != want.String() {
			t.Errorf("%s: %d samples, %d locations; profile.Parse: %d, %d", path, len(got.Sample), len(got.Location), len(want.Sample), len(want.Location))
		}
	}
}

// TestDefaultHeadroom: the largest real profile is well within the default limits.
func TestDefaultHeadroom(t *testing.T) {
	path := "testdata/real/loki_alloc_objects_merged_big.pb.gz"
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Default.ReadFileData(path)
	if err != nil {
		t.Fatal(err)
	}
	est := Estimate(data)
	t.Logf("%s: %d bytes, %d decompressed, about %d to parse", path, st.Size(), len(data), est)
	if 10*st.Size() > Default.Compressed || 10*int64(len(data)) > Default.Decompressed || 3*est > Default.Memory {
		t.Errorf("less than 10 times headroom in size or 3 times in memory for %s: %+v", path, Default)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := Default.ReadFileAs("heap.pb.gz", filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.HasPrefix(err.Error(), "heap.pb.gz: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v", err)
	}
}

// TestParseProto: protobuf only, within the memory limit.
func TestParseProto(t *testing.T) {
	lim := Limits{Compressed: 8 << 20, Decompressed: 8 << 20, Memory: 16 << 20}
	real, err := lim.ReadFileData("testdata/real/node_exporter_goroutine.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := lim.ParseProto("goroutine", real); err != nil || len(p.Sample) == 0 {
		t.Errorf("a real profile: %v", err)
	}
	legacy, _ := os.ReadFile("testdata/real/gobench_legacy_text.heap")
	for _, tc := range []struct {
		name string
		data []byte
		err  error
		msg  string
	}{
		{"legacy text", legacy, ErrNotProfile, "not a protobuf encoding"},
		{"dense", protoShapes(1 << 20)[1].data, ErrTooLarge, "more than 16 MiB"},
		{"gzip", gzipBytes(t, real), ErrNotProfile, "gzipped twice"},
		{"no sample types", pbInt(nil, 9, 1), ErrNotProfile, ""},
	} {
		_, err := lim.ParseProto(tc.name, tc.data)
		if !errors.Is(err, tc.err) || !strings.HasPrefix(err.Error(), tc.name+": ") || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.err, tc.msg)
		}
	}
}
