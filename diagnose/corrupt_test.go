package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

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
