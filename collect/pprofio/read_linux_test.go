package pprofio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/infile"
)

// noHang runs fn and fails the test if it has not returned within a minute: a hang is the
// defect looked for (no timing is asserted).
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

// TestNotRegularFiles: a profile that is a link to /dev/zero, or a named pipe no one
// writes, is refused at once by ReadFileAs (what reads a session's profiles); ReadArgDataAs
// (what reads a path the user typed) refuses the device but reads a pipe within the limits.
func TestNotRegularFiles(t *testing.T) {
	dir := t.TempDir()
	zero, fifo := filepath.Join(dir, "zero.pb.gz"), filepath.Join(dir, "fifo.pb.gz")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	for _, c := range []struct {
		name, path, want string
		read             func(name, path string) error
	}{
		{"ReadFileAs /dev/zero", zero, "a character device (a symbolic link to /dev/zero)", func(n, p string) error { _, err := Default.ReadFileAs(n, p); return err }},
		{"ReadFileAs fifo", fifo, "a named pipe", func(n, p string) error { _, err := Default.ReadFileAs(n, p); return err }},
		{"ReadFileData fifo", fifo, "a named pipe", func(_, p string) error { _, err := Default.ReadFileData(p); return err }},
		{"ReadArgDataAs /dev/zero", zero, "a character device", func(n, p string) error { _, err := Default.ReadArgDataAs(n, p); return err }},
	} {
		noHang(t, c.name, func() { err = c.read("profile x", c.path) })
		if !errors.Is(err, infile.ErrNotRegular) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "profile x: ") && !strings.HasPrefix(err.Error(), "open "+c.path) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A pipe the user gives, fed by a writer: read and parsed. A shell's <(curl ...) is
	// /dev/fd/N, an anonymous pipe whose writer is there before memdoctor opens it.
	real, err := os.ReadFile("../../testdata/profiles/prometheus_heap_4types.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		pw.Write(real)
		pw.Close()
	}()
	var n int
	noHang(t, "ReadArgDataAs on a pipe", func() {
		data, rerr := Default.ReadArgDataAs("profile <(...)", fmt.Sprintf("/proc/self/fd/%d", pr.Fd()))
		if rerr != nil {
			err = rerr
			return
		}
		p, perr := Default.ParseData("profile <(...)", data)
		if err = perr; p != nil {
			n = len(p.Sample)
		}
	})
	if err != nil || n == 0 {
		t.Errorf("ReadArgDataAs on a pipe: %d samples, %v", n, err)
	}
}
