package report

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

// TestHTMLProfileBomb replaces a snapshot a finding names with a gzip bomb (1 GiB of zeros
// in 1 MiB): the page says why that flame graph is missing, and building it costs a bounded
// amount of memory (profile.Parse inflated the bomb whole).
func TestHTMLProfileBomb(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.CopyFS(dir, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 65<<20))
	zw.Close()
	bomb := filepath.Join(dir, "profiles", "heap-20261122T071339.505Z.pb.gz")
	if err := os.WriteFile(bomb, bytes.Repeat(member.Bytes(), 16), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev := evidenceOf(t, s)
	var page bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = HTML(&page, s, ev, fixtureDiagnosis(s), HTMLOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := "heap-20261122T071339.505Z.pb.gz: decompresses to more than 32 MiB"; !strings.Contains(page.String(), want) {
		t.Errorf("the page does not say %q", want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("the report allocated %d MiB", alloc>>20)
	}
}
