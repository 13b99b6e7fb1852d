package recorder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// alive reports whether pid is a live process (a zombie is dead: it only waits to be reaped).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// readPIDs waits for a helper's pid file.
func readPIDs(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNoSurvivors fails the test for each pid still alive, and kills it.
func checkNoSurvivors(t *testing.T, pids []int) {
	t.Helper()
	// SIGKILL is asynchronous: give the kernel a moment to finish the processes off.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d survived", pid)
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

// TestAbortKillsStubbornTarget stops a recording of a program that ignores SIGINT, SIGTERM
// and SIGHUP and has a child: the graceful stop would wait --grace (an hour here), the abort
// kills the whole process group at once, and the session is closed.
func TestAbortKillsStubbornTarget(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	cfg := runConfig(t, helperCommand(t, "stubborn", "-pidfile", pidFile)...)
	cfg.Grace = time.Hour
	abort := make(chan struct{})
	cfg.Abort = abort
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		res Result
		err error
	}
	done := make(chan result, 1)
	go func() { res, err := Run(ctx, cfg); done <- result{res, err} }()
	pids := readPIDs(t, pidFile)
	waitForTarget(t, cfg.Out)

	cancel() // the first Ctrl-C: SIGINT to the group, ignored
	time.Sleep(200 * time.Millisecond)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d died of SIGINT: the helper should ignore it", pid)
		}
	}
	close(abort) // the second
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute): // far less than the hour of grace: the abort worked
		t.Fatal("Run did not return after the abort")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkNoSurvivors(t, pids)
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Status != session.StatusInterrupted || s.Manifest.End.IsZero() {
		t.Errorf("manifest status %q, end %v: the session was not closed", s.Manifest.Status, s.Manifest.End)
	}
}

// waitForTarget waits until the recording has found its Go target.
func waitForTarget(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := session.Open(dir)
		if err == nil && s.Manifest.Target.PID != 0 {
			return
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "not a memdoctor session") {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the recording found no target")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
