package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// stubbornRun starts `memdoctor run` on the stubborn program in a process group of its own,
// as a shell starts a job, and waits until memdoctor watches it. It returns memdoctor, the
// PIDs of the program and its child, the session directory and memdoctor's stderr.
func stubbornRun(t *testing.T, grace string) (*exec.Cmd, []int, string, *output) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(memdoctorBin, "run", "--grace", grace, "--out", dir, "--", stubbornBin, "-pidfile", pidFile)
	// A file, not a pipe: an orphaned program holding a pipe open would keep cmd.Wait waiting.
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(time.Minute)
	var pids []int
	for {
		if pids == nil {
			if b, err := os.ReadFile(pidFile); err == nil {
				for _, f := range strings.Fields(string(b)) {
					n, _ := strconv.Atoi(f)
					pids = append(pids, n)
				}
				t.Cleanup(func() {
					for _, pid := range pids {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				})
			}
		}
		if s, err := session.Open(dir); err == nil && pids != nil && s.Manifest.Target.PID != 0 {
			return cmd, pids, dir, &output{out.Name()}
		}
		if time.Now().After(deadline) {
			t.Fatalf("memdoctor did not find its target:\n%s", readFile(out.Name()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// output is the file where memdoctor's stdout and stderr go.
type output struct{ path string }

func (o *output) String() string { return readFile(o.path) }

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// waitExit waits for memdoctor to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr *output) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		t.Fatalf("memdoctor did not exit:\n%s", stderr.String())
		return -1
	}
}

// checkClosed checks that nothing of the stubborn program survives and that the session was
// closed with the given status.
func checkClosed(t *testing.T, pids []int, dir, status string, stderr *output) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second) // SIGKILL is delivered asynchronously
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d of the target survived memdoctor", pid)
		}
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Status != status || s.Manifest.End.IsZero() {
		t.Errorf("manifest status %q, end %v; want %q, closed\n%s", s.Manifest.Status, s.Manifest.End, status, stderr.String())
	}
}

// TestTwoCtrlC presses Ctrl-C twice on a recording of a program that ignores SIGINT and
// SIGTERM: memdoctor must kill the program's whole process group, close the session and
// exit at once (not after the 10 minutes of --grace), saying so.
func TestTwoCtrlC(t *testing.T) {
	cmd, pids, dir, stderr := stubbornRun(t, "10m")
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // Ctrl-C signals the terminal's foreground group
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	code := waitExit(t, cmd, stderr)
	last := lastLine(stderr.String())
	if code != 1 || !strings.Contains(last, "stopped at once") || !strings.Contains(last, dir) {
		t.Errorf("exit %d, last line %q; want 1 and a line saying it stopped at once, naming the session", code, last)
	}
	checkClosed(t, pids, dir, session.StatusInterrupted, stderr)
}

// TestGroupSIGTERM sends SIGTERM as timeout(1) does, to memdoctor and then to its whole
// process group: one stop request. memdoctor stops gracefully (SIGINT, SIGKILL after
// --grace), closes the session and diagnoses it.
func TestGroupSIGTERM(t *testing.T) {
	cmd, pids, dir, stderr := stubbornRun(t, "2s")
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	time.Sleep(10 * time.Millisecond) // timeout signals its group right after; a loaded machine delays it
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	code := waitExit(t, cmd, stderr)
	checkClosed(t, pids, dir, session.StatusInterrupted, stderr)
	// One stop request: a graceful stop, diagnosed. (On a machine so loaded that the two
	// signals arrive 100 ms apart, they are two requests: memdoctor stops at once, exit 1.)
	if code == 0 && !strings.Contains(stderr.String(), "session saved in "+dir) {
		t.Errorf("exit 0 without the diagnosis and \"session saved\":\n%s", stderr.String())
	}
}

// TestHangup closes the terminal under a recording (SIGHUP to memdoctor's group): the
// session is closed and the program does not survive.
func TestHangup(t *testing.T) {
	cmd, pids, dir, stderr := stubbornRun(t, "2s")
	syscall.Kill(-cmd.Process.Pid, syscall.SIGHUP)
	waitExit(t, cmd, stderr)
	checkClosed(t, pids, dir, session.StatusInterrupted, stderr)
}

// TestFullDiskEndToEnd records with metrics.jsonl and gctrace.log on /dev/full, where every
// write fails with ENOSPC as on a full disk: memdoctor must exit 1 with one line saying the
// session could not be written whole, not "session saved" and exit 0.
func TestFullDiskEndToEnd(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test needs Linux's /dev/full: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{session.MetricsFile, session.GCTraceFile} {
		if err := os.Symlink("/dev/full", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := memdoctor(t, ctx, "run", "--duration", "3s", "--out", dir, "--", targetBin, "-live-mib", "8")
	last := lastLine(res.stderr)
	if res.code != 1 || !strings.HasPrefix(last, "memdoctor: ") || !strings.Contains(last, "could not be written whole") ||
		!strings.Contains(last, "no space left on device") || strings.Contains(res.stderr, "session saved") {
		t.Errorf("exit %d, last line %q; want 1 and one line saying the session could not be written\n%s", res.code, last, res.stderr)
	}
	// What could be written (the manifest, the profiles) is still a session. (Reading
	// /dev/full gives zeros without end: put empty files where the disk had no room.)
	for _, name := range []string{session.MetricsFile, session.GCTraceFile} {
		os.Remove(filepath.Join(dir, name))
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Target.PID == 0 || len(s.ProfilesOf(session.KindHeap, true)) == 0 {
		t.Errorf("the manifest (target %+v) and the profiles (%d) should have been written", s.Manifest.Target, len(s.Profiles))
	}
}

// TestSIGKILLedMemdoctor kills memdoctor itself with SIGKILL (as the OOM killer would) while
// it records a program that ignores SIGINT, SIGTERM and SIGHUP: memdoctor can do nothing, so
// the kernel must kill the program (Pdeathsig SIGKILL; SIGTERM would be ignored). The
// program's own child is not memdoctor's to reach: the kernel kills only the process
// memdoctor started (the README says so). The session left behind is analysable.
func TestSIGKILLedMemdoctor(t *testing.T) {
	cmd, pids, dir, stderr := stubbornRun(t, "10m")
	cmd.Process.Signal(syscall.SIGKILL)
	waitExit(t, cmd, stderr)
	deadline := time.Now().Add(5 * time.Second) // SIGKILL is delivered asynchronously
	for alive(pids[0]) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pids[0]) {
		t.Errorf("the program memdoctor started (pid %d) survived memdoctor's SIGKILL", pids[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res := memdoctor(t, ctx, "analyze", dir); res.code != 0 || !strings.Contains(res.stdout+res.stderr, "did not finish") {
		t.Errorf("analyze after memdoctor's SIGKILL: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}
