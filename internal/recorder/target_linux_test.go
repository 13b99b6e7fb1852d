//go:build linux

package recorder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
)

// TestTreeWatcherWaitsForExec: a process caught between fork and the end of its exec (its
// arguments not yet there, or still its parent's program) is not taken for what it will run.
// The race made run's manifest say the target's GODEBUG was empty (TestGODEBUGIsKept in CI).
func TestTreeWatcherWaitsForExec(t *testing.T) {
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := func(target string) {
		t.Helper()
		p := filepath.Join(root, "proc/100/exe")
		os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	stat := func(comm string) {
		write("proc/100/stat", "100 ("+comm+") S 1 100 100 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 500 1000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n")
	}
	write("proc/stat", "cpu  1 2 3 4\nbtime 1700000000\n")
	stat("parent")
	write("proc/100/cmdline", "")
	exe(self)
	w := newTreeWatcher(procfs.FS{Root: root}, 100, time.Now())

	// The new memory is mapped but holds no arguments yet.
	if ps := w.processes(); len(ps) != 0 {
		t.Fatalf("mid-exec process listed: %+v", ps)
	}
	// A vfork child still running in its parent's memory, with its parent's arguments.
	write("proc/100/cmdline", "parent\x00-x\x00")
	ps := w.processes()
	if len(ps) != 1 || ps[0].Name != "parent" || ps[0].GoVersion == "" {
		t.Fatalf("before exec: %+v", ps)
	}
	// exec done: another program, another name.
	notGo := filepath.Join(root, "target")
	write("target", "#!/bin/sh\n")
	exe(notGo)
	stat("target")
	write("proc/100/cmdline", "target\x00")
	ps = w.processes()
	if len(ps) != 1 || ps[0].Name != "target" || ps[0].Exe != notGo || ps[0].GoVersion != "" {
		t.Fatalf("after exec, still the parent's program: %+v", ps)
	}
}
