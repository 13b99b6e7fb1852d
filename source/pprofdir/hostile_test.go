//go:build unix

package pprofdir

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestLoadHostileFolder: a folder holding gzip bombs (zeros, and a real profile followed by
// 256 MiB of zeros), a symbolic link to /dev/zero, a named pipe, a loop of
// folders and a file named with terminal escapes is read to the end, within bounded memory,
// with one note per kind of thing skipped; the real profiles in it are read.
func TestLoadHostileFolder(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/heapleak/heap_1.pb.gz", filepath.Join(dir, "good", "1"))
	copyFile(t, "testdata/heapleak/heap_13.pb.gz", filepath.Join(dir, "good", "2"))
	write(t, filepath.Join(dir, "zeros.gz"), string(gzipped(t, nil, 256<<20)))
	start, err := os.ReadFile(filepath.Join(realProfiles, "node_exporter_heap_4types.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	raw := gunzip(t, start)
	write(t, filepath.Join(dir, "profile-then-zeros.pb.gz"), string(gzipped(t, raw, 256<<20)))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "good", "loop")); err != nil {
		t.Fatal(err)
	}
	evil := "\x1b]0;pwned\x07\x1b[31mheap\x1b[0m.pb.gz"
	write(t, filepath.Join(dir, evil), "\x1f\x8bnot gzip at all")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ev, err := Load([]string{dir}, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 200<<20 {
		t.Errorf("reading the folder allocated %d MiB", got>>20)
	}
	if len(ev.Heaps) != 2 {
		t.Errorf("%d heap snapshots, want the 2 good ones", len(ev.Heaps))
	}
	notes := strings.Join(ev.Notes, "\n")
	for _, want := range []string{
		"skipped 1 file(s) that are neither profiles nor gctrace logs (zeros.gz)", // its first bytes are zeros
		"skipped 2 profile(s) that could not be read",
		"skipped 2 entries that are not regular files",
		"1 folder(s) reached again through symbolic links were read once",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(notes, evil) || !strings.Contains(notes, "profile-then-zeros.pb.gz") {
		t.Errorf("the unreadable profiles are not named:\n%s", notes)
	}
	// Named alone, the bomb is an error that says why.
	if _, err := Load([]string{filepath.Join(dir, "profile-then-zeros.pb.gz")}, Options{}); err == nil || !strings.Contains(err.Error(), "decompresses to more than 32 MiB") {
		t.Errorf("the bomb alone: %v", err)
	}
}

// gzipped compresses data followed by n zero bytes.
func gzipped(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(data)
	zeros := make([]byte, 1<<20)
	for ; n > 0; n -= len(zeros) {
		zw.Write(zeros[:min(n, len(zeros))])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
