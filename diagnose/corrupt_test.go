package diagnose

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

// End to end: a recorded session on disk whose profiles are damaged, read and diagnosed as
// memdoctor does.

// TestCorruptProfile copies a real session, replaces one heap profile with an HTML page and
// truncates another: the diagnosis still comes out, names the broken files in its notes, and
// still finds the leak from what is left.
func TestCorruptProfile(t *testing.T) {
	src := filepath.Join("testdata", "sessions", "tcp-reassembly")
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	heaps, _ := filepath.Glob(filepath.Join(dir, "profiles", "heap-*.pb.gz"))
	if len(heaps) < 4 {
		t.Fatalf("fixture has %d heap profiles", len(heaps))
	}
	os.WriteFile(heaps[1], []byte("<html><body>502 Bad Gateway</body></html>"), 0o644)
	b, _ := os.ReadFile(heaps[2])
	os.WriteFile(heaps[2], b[:len(b)/2], 0o644)

	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := diagnoseSession(t, s, Options{})
	notes := strings.Join(d.Notes, "\n")
	for _, h := range heaps[1:3] {
		if !strings.Contains(notes, filepath.Base(h)) {
			t.Errorf("notes do not name the broken %s:\n%s", filepath.Base(h), notes)
		}
	}
	if f := findingOfKind(d.Findings, KindHeapLeak); f == nil || len(f.Culprits) == 0 || !strings.HasSuffix(f.Culprits[0].Function, "bufferSegment") {
		t.Errorf("the leak is no longer found from the intact files: %+v", d.Findings)
	}
}

// TestProfileBomb replaces a heap profile of a real session with a gzip bomb (1 GiB of zeros
// in 1 MiB): the diagnosis names it in its notes, still finds the leak from the other files,
// and reading the bomb costs memdoctor a bounded amount (profile.Parse allocated it whole).
func TestProfileBomb(t *testing.T) {
	src := filepath.Join("testdata", "sessions", "tcp-reassembly")
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	heaps, _ := filepath.Glob(filepath.Join(dir, "profiles", "heap-*.pb.gz"))
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	os.WriteFile(heaps[1], bytes.Repeat(member.Bytes(), 16), 0o644)

	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := diagnoseSession(t, s, Options{})
	runtime.ReadMemStats(&after)
	notes := strings.Join(d.Notes, "\n")
	if want := filepath.Base(heaps[1]) + ": decompresses to more than 32 MiB"; !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	if f := findingOfKind(d.Findings, KindHeapLeak); f == nil {
		t.Errorf("the leak is no longer found from the intact files: %+v", d.Findings)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("the diagnosis allocated %d MiB", alloc>>20)
	}
}
