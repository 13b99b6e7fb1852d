// Package cgrouptest makes memory cgroups for tests that run a process in one of its own: to
// be OOM-killed at a limit, or to be read in a cgroup other than the test's (Linux, as root).
package cgrouptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Memory makes a memory cgroup of its own, named after prefix, with limit bytes of memory and
// no swap (no limit when limit is 0): v2 when the unified hierarchy has the memory controller,
// else v1. It returns the file a process writes its PID to, to enter it, and removes the
// cgroup when the test ends (once its processes are gone). It skips the test when this
// machine lets no cgroup be made (not root, or a read-only hierarchy).
func Memory(t testing.TB, prefix string, limit int64) (procs string) {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano())
	dir := filepath.Join("/sys/fs/cgroup/memory", name)
	files := map[string]string{"memory.limit_in_bytes": fmt.Sprint(limit), "memory.swappiness": "0"}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(b), "memory") {
		dir = filepath.Join("/sys/fs/cgroup", name)
		files = map[string]string{"memory.max": fmt.Sprint(limit), "memory.swap.max": "0"}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup (%v): this test needs root and a writable cgroup hierarchy", err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100 && os.Remove(dir) != nil; i++ { // its processes may still be dying
			time.Sleep(50 * time.Millisecond)
		}
	})
	if limit == 0 {
		files = nil
	}
	for f, v := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Skipf("cannot set %s of %s: %v", f, dir, err)
		}
	}
	return filepath.Join(dir, "cgroup.procs")
}
