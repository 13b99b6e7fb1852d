package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// fullFS is the operating system's file system with room for only so many more bytes: past
// them, a write stores what fits and fails with ENOSPC.
type fullFS struct {
	session.OSFS
	mu   sync.Mutex
	left int
}

func (f *fullFS) OpenFile(name string, flag int, perm fs.FileMode) (session.File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f}, nil
}

type fullFile struct {
	session.File
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

// TestRunFullDisk records a session on a disk that fills up after a few kilobytes: the
// recording must end with ErrSessionWrite (not as a saved session), and what was written
// must still open, with a whole manifest.
func TestRunFullDisk(t *testing.T) {
	cfg := runConfig(t, helperCommand(t, "gc")...)
	cfg.Duration = 2 * time.Second
	cfg.SessionFS = &fullFS{left: 8 << 10}
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrSessionWrite) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Run on a full disk = %+v, %v; want ErrSessionWrite wrapping ENOSPC", res, err)
	}
	if res.Dir != cfg.Out {
		t.Errorf("result dir %q, want %q", res.Dir, cfg.Out)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, session.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m session.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("torn manifest: %v", err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if len(samplesOf(t, s)) == 0 {
		t.Error("no sample survived")
	}
	if s.Manifest.Status != session.StatusRunning || !strings.Contains(strings.Join(s.Warnings, "\n"), "did not finish") {
		t.Errorf("status %q, warnings %q: the reader should say the session was not closed", s.Manifest.Status, s.Warnings)
	}
}
