package pprofdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// realProfiles holds real profiles of other programs (see PROVENANCE.tsv there).
const realProfiles = "../../testdata/profiles"

// TestLoadRecordedHeapLeak: a folder of 13 heap profiles curl'd from a leaking program every
// 5 s, named heap_N.pb.gz (so that name order is not time order: heap_10 sorts before heap_2),
// becomes 13 heap snapshots in time order, and a live heap series from their inuse totals in
// which each GC's reading counts once.
func TestLoadRecordedHeapLeak(t *testing.T) {
	ev, err := Load([]string{"testdata/heapleak"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Mode != Mode || len(ev.Heaps) != 13 || ev.Target.Name != "leaky" {
		t.Fatalf("mode %q, %d heaps, target %q", ev.Mode, len(ev.Heaps), ev.Target.Name)
	}
	for i := 1; i < len(ev.Heaps); i++ {
		if !ev.Heaps[i].T.After(ev.Heaps[i-1].T) {
			t.Errorf("snapshot %d (%s) is not after %s", i, ev.Heaps[i].Path, ev.Heaps[i-1].Path)
		}
	}
	if ev.Live.Src != evidence.SourceHeapProfile || ev.Live.Len() < 5 || ev.Live.Len() >= 13 {
		t.Errorf("live heap from %v, %d readings: want one per GC seen", ev.Live.Src, ev.Live.Len())
	}
	if first, last := ev.Live.First().V, ev.Live.Last().V; first > 20<<20 || last < 100<<20 {
		t.Errorf("live heap %.0f -> %.0f, the recording grows from about 13 to 127 MiB", first, last)
	}
	if ev.AllocBytes.Len() != 13 || ev.Window().Seconds() < 55 {
		t.Errorf("%d allocation readings over %s", ev.AllocBytes.Len(), ev.Window())
	}
	notes := strings.Join(ev.Notes, "\n")
	if !strings.Contains(notes, "repeat their predecessor's in-use heap") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, gap := range []string{evidence.GapRSS, evidence.GapGC, evidence.GapGoroutines} {
		if ev.Gaps[gap] == "" || strings.Contains(ev.Gaps[gap], "pprof endpoint") {
			t.Errorf("gap %s: %q", gap, ev.Gaps[gap])
		}
	}
}

// TestLoadMixedFolder: profiles of every kind and format, gzipped or not, with a gctrace log
// with times, in subfolders, next to files that are none of these: each is read by its
// content, and what is skipped is counted in notes.
func TestLoadMixedFolder(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/goroutine-debug2.txt.gz", filepath.Join(dir, "dumps", "a"))
	copyFile(t, "testdata/goroutine-debug1.txt", filepath.Join(dir, "dumps", "b"))
	copyFile(t, filepath.Join(realProfiles, "node_exporter_cpu_10s.pb.gz"), filepath.Join(dir, "cpu.pb.gz"))
	copyFile(t, filepath.Join(realProfiles, "gobench_legacy_text.heap"), filepath.Join(dir, "x", "legacy"))
	copyFile(t, "testdata/heapleak/heap_1.pb.gz", filepath.Join(dir, "h1"))
	copyFile(t, "testdata/heapleak/heap_2.pb.gz", filepath.Join(dir, "h2.pprof"))
	copyFile(t, filepath.Join(realProfiles, "pyroscope_server_heap_4types.pb.gz"), filepath.Join(dir, "other", "service-b"))
	write(t, filepath.Join(dir, "README.md"), "notes about the incident\n")
	write(t, filepath.Join(dir, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write(t, filepath.Join(dir, ".hidden"), "gc 1 @0.1s 0%: 0.1+0.1+0.1 ms clock, 0.1+0.1/0.1/0.1+0.1 ms cpu, 4->4->1 MB, 5 MB goal, 2 P\n")
	ev, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Heaps) != 4 || len(ev.GoroutineSnaps) != 2 {
		t.Errorf("%d heap and %d goroutine snapshots, want 4 and 2", len(ev.Heaps), len(ev.GoroutineSnaps))
	}
	notes := strings.Join(ev.Notes, "\n")
	for _, want := range []string{
		"skipped 2 file(s) that are neither profiles nor gctrace logs (README.md, image.png)",
		"skipped 1 profile(s) not about memory (cpu.pb.gz); the first: a CPU profile",
		"carry no time of their own",
		"the profiles come from 2 different binaries",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if ev.GCLines != 0 {
		t.Errorf("a hidden file was read: %d gc lines", ev.GCLines)
	}
}

// TestLoadExplicitBadInputs: a PATH named on the command line that cannot be read as asked is
// an error naming it and saying what to give instead.
func TestLoadExplicitBadInputs(t *testing.T) {
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	write(t, readme, "hello\n")
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	sess := filepath.Join(dir, "session")
	os.Mkdir(sess, 0o755)
	write(t, filepath.Join(sess, session.ManifestFile), "{}")
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "nope"), "no such file or directory: give a memdoctor session"},
		{readme, "text without GODEBUG=gctrace=1 lines"},
		{filepath.Join(realProfiles, "node_exporter_cpu_10s.pb.gz"), "a CPU profile, not about memory"},
		{"/dev/null", "not a regular file"},
		{empty, "no heap, goroutine or goroutineleak profile and no gctrace log found (it is empty)"},
		{sess, "a memdoctor session is analysed on its own"},
	} {
		_, err := Load([]string{c.path}, Options{})
		var bad *BadInputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
