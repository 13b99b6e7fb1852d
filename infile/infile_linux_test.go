package infile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noHang runs fn and fails the test if it has not returned within a minute: a hang is the
// defect these tests look for (the bound is far above what fn takes; it is no timing test).
func noHang(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s hangs", what)
	}
}

// TestDevZeroRefused: a symbolic link to /dev/zero (endless) is refused at once, saying
// what it is and where it leads.
func TestDevZeroRefused(t *testing.T) {
	link := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"Open", func() error { _, err := Open(link, 0); return err }},
		{"OpenArg", func() error { _, err := OpenArg(link, 0); return err }},
		{"ReadFile", func() error { _, err := ReadFile(link, 0); return err }},
		{"Check", func() error { return Check(link, 0) }},
	} {
		var err error
		noHang(t, c.name, func() { err = c.fn() })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a character device (a symbolic link to /dev/zero)") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestFIFO: a named pipe with no writer (opening it for reading would wait forever) is
// refused by Open at once; OpenArg takes it and reads what a writer sends, within its bound.
func TestFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	noHang(t, "Open", func() { _, err = Open(fifo, 0) })
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe") {
		t.Errorf("Open: %v", err)
	}
	noHang(t, "ReadFile", func() { _, err = ReadFile(fifo, 0) })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile: %v", err)
	}
	for _, c := range []struct {
		max     int64
		want    string
		tooLarg bool
	}{{0, "profile bytes", false}, {13, "profile bytes", false}, {5, "", true}} {
		f, err := OpenArg(fifo, c.max)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // the reader is open: no wait
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString("profile bytes")
		w.Close()
		var b []byte
		noHang(t, "reading the pipe", func() { b, err = io.ReadAll(f) })
		f.Close()
		if c.tooLarg {
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("max %d: %q, %v; want ErrTooLarge", c.max, b, err)
			}
		} else if err != nil || string(b) != c.want || f.Size() != -1 {
			t.Errorf("max %d: %q, %v", c.max, b, err)
		}
	}
	// Without a writer, the pipe reads as empty rather than waiting for one.
	f, err := OpenArg(fifo, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	noHang(t, "reading a pipe without a writer", func() { b, err = io.ReadAll(f) })
	f.Close()
	if err != nil || len(b) != 0 {
		t.Errorf("no writer: %q, %v", b, err)
	}
}
