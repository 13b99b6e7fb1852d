//go:build unix

package record

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"
)

// TestSessionFilesArePrivate: every file of a session is the user's alone (0600): profiles,
// the manifest (it holds the command line) and the append-only logs.
func TestSessionFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, Manifest{Flags: map[string]string{"token": "secret"}})
	if err != nil {
		t.Fatal(err)
	}
	w.AppendSample(Sample{Time: time.Now()})
	w.AppendGCTrace("gc 1 @0.1s 1%: 0.1+0.2+0.3 ms clock, 0.4+0.5/0.6/0.7+0.8 ms cpu, 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 8 P")
	w.WriteProfile(KindHeap, time.Now(), "", []byte("x"))
	w.WriteTrace("a.trace", []byte("x"))
	w.Close(StatusComplete, "")
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		if info, err := d.Info(); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", path, info.Mode().Perm(), err)
		}
		return nil
	})
	if n < 5 {
		t.Errorf("%d files", n)
	}
}
