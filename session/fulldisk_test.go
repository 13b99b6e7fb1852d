package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fullFS is the operating system's file system with a quota on the bytes written: past it,
// a write stores what fits and fails with ENOSPC, as on a full disk.
type fullFS struct {
	OSFS
	mu   sync.Mutex
	left int
}

func (f *fullFS) setLeft(n int) { f.mu.Lock(); f.left = n; f.mu.Unlock() }

func (f *fullFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f}, nil
}

type fullFile struct {
	File
	fs *fullFS
}

func (f *fullFile) Write(b []byte) (int, error) {
	f.fs.mu.Lock()
	n := min(len(b), f.fs.left)
	f.fs.left -= n
	f.fs.mu.Unlock()
	if n < len(b) {
		n, _ = f.File.Write(b[:n])
		return n, &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	}
	return f.File.Write(b)
}

// TestFullDisk fills the disk in the middle of a session: the writes that fail say so, the
// manifest stays whole, no profile appears half-written, a torn metrics line is skipped, and
// once space returns the session goes on where it was.
func TestFullDisk(t *testing.T) {
	disk := &fullFS{left: 1 << 20}
	dir := filepath.Join(t.TempDir(), "s")
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w, err := CreateFS(disk, dir, Manifest{Mode: "run", Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	sample := func(i int) Sample {
		return Sample{Time: t0.Add(time.Duration(i) * time.Second), Proc: &Proc{PID: 7, RSSBytes: uint64(i) << 20}}
	}
	for i := range 3 {
		if err := w.AppendSample(sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.UpdateManifest(func(m *Manifest) { m.Notes = append(m.Notes, "before the disk filled") }); err != nil {
		t.Fatal(err)
	}

	disk.setLeft(20) // the disk fills in the middle of the next line
	isFull := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s on a full disk: %v, want ENOSPC", what, err)
		}
	}
	isFull("AppendSample", w.AppendSample(sample(3)))
	isFull("AppendSample", w.AppendSample(sample(4)))
	isFull("UpdateManifest", w.UpdateManifest(func(m *Manifest) { m.Notes = append(m.Notes, "lost") }))
	_, err = w.WriteProfile(KindHeap, t0.Add(4*time.Second), "", make([]byte, 4096))
	isFull("WriteProfile", err)

	disk.setLeft(1 << 20) // space again
	if err := w.AppendSample(sample(5)); err != nil {
		t.Fatal(err)
	}
	disk.setLeft(0) // and full for good: the closing manifest is lost
	isFull("Close", w.Close(StatusComplete, "ran"))

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	st, err := s.EachSample(func(smp *Sample) error {
		got = append(got, smp.Proc.RSSBytes>>20)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{0, 1, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("samples read back (RSS MiB) %v, want %v", got, want)
	}
	if w := st.Warning(MetricsFile); !strings.Contains(w, "skipped 1 corrupt or torn line(s), the first at line 4") {
		t.Errorf("the read does not name the torn line: %q", w)
	}
	// The manifest is the last whole one: written before the disk filled.
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest torn: %v\n%s", err, b)
	}
	if m.Status != StatusRunning || len(m.Notes) != 1 || m.Notes[0] != "before the disk filled" {
		t.Errorf("manifest: status %q, notes %q", m.Status, m.Notes)
	}
	if len(s.Profiles) != 0 {
		t.Errorf("a profile written on a full disk is visible: %+v", s.Profiles)
	}
	for _, sub := range []string{".", ProfilesDir} {
		entries, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temporary file left behind: %s", filepath.Join(sub, e.Name()))
			}
		}
	}
}
