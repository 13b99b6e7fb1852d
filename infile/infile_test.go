package infile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write(t, path, []byte("hello\n"))
	if err := os.Symlink(path, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(dir, "link")} {
		b, err := ReadFile(p, 6)
		if err != nil || string(b) != "hello\n" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
		if err := Check(p, 6); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}
	empty := filepath.Join(dir, "empty")
	write(t, empty, nil)
	if b, err := ReadFile(empty, 0); err != nil || len(b) != 0 {
		t.Errorf("ReadFile(empty) = %q, %v", b, err)
	}
}

func TestTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	write(t, path, make([]byte, 3<<20))
	for name, err := range map[string]error{
		"ReadFile": func() error { _, err := ReadFile(path, 2<<20); return err }(),
		"Open":     func() error { _, err := Open(path, 2<<20); return err }(),
		"Check":    Check(path, 2<<20),
	} {
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "3 MiB, over 2 MiB") {
			t.Errorf("%s: %v, want ErrTooLarge naming the file and both sizes", name, err)
		}
	}
	if _, err := ReadFile(path, 0); err != nil {
		t.Errorf("no bound: %v", err)
	}
}

// TestStopsAtOpenSize: a file that grows while it is read is read to the size it had when
// opened, so that a file written without end cannot keep memdoctor reading.
func TestStopsAtOpenSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	write(t, path, []byte("0123456789"))
	f, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte("x"), 1<<20))
	w.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "0123456789" {
		t.Errorf("read %d bytes (%v), want the 10 of the file as opened", len(b), err)
	}
	var tail [4]byte
	if n, err := f.ReadAt(tail[:], 8); n != 2 || err != io.EOF || string(tail[:2]) != "89" {
		t.Errorf("ReadAt past the size: %d %q %v", n, tail[:n], err)
	}
	if f.Size() != 10 {
		t.Errorf("Size %d", f.Size())
	}
}

func TestDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	for name, err := range map[string]error{
		"Open":    func() error { _, err := Open(dir, 0); return err }(),
		"OpenArg": func() error { _, err := OpenArg(dir, 0); return err }(),
		"Check":   Check(dir, 0),
	} {
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
			t.Errorf("%s: %v, want ErrNotRegular saying it is a directory", name, err)
		}
	}
}
