package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/gotool"
)

// startHoldersTarget starts testdata/holders-target (bin) with a heap of n objects and waits
// until it is built; the target writes a counter to the returned heartbeat file.
func startHoldersTarget(t *testing.T, bin string, n int, env ...string) (pid int, heartbeat string) {
	t.Helper()
	heartbeat = filepath.Join(t.TempDir(), "heartbeat")
	cmd := exec.Command(bin, "-objects", strconv.Itoa(n), "-rate", "4096", "-heartbeat", heartbeat)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasSuffix(line, "ready\n") {
		t.Fatalf("holders-target: %q, %v", line, err)
	}
	return cmd.Process.Pid, heartbeat
}

// runsAgain fails t unless the process is neither stopped nor traced and its heartbeat
// advances within a few seconds.
func runsAgain(t *testing.T, pid int, heartbeat string) {
	t.Helper()
	first, _ := os.ReadFile(heartbeat)
	deadline := time.Now().Add(10 * time.Second)
	for {
		now, _ := os.ReadFile(heartbeat)
		st, tracer := procState(pid), tracerPid(pid)
		if st != 't' && st != 'T' && tracer == 0 && len(now) > 0 && !bytes.Equal(now, first) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d does not run again: state %c, traced by %d, heartbeat %q then %q", pid, st, tracer, first, now)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tracerPid(pid int) int {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}

// TestHoldersNeverLeavesTheProcessStopped kills memdoctor (SIGKILL, which nothing can
// catch) and interrupts it (SIGINT) while the process is stopped for the copy, and while the
// copy is walked, the process running again: either way the process runs again. The copy is
// a file no name ever refers to: the directory it goes to stays empty, and only memdoctor
// holds it.
func TestHoldersNeverLeavesTheProcessStopped(t *testing.T) {
	defer parallel(t)()
	for _, during := range []string{"copy", "walk"} {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
			t.Run(during+"/"+sig.String(), func(t *testing.T) {
				if testing.Short() && (during != "copy" || sig != syscall.SIGKILL) {
					t.Skip("-short: memdoctor killed during the copy only")
				}
				pid, heartbeat := startHoldersTarget(t, holdersTargetBin, 3_000_000)
				tmp := t.TempDir()
				cmd := exec.Command(memdoctorBin, "holders", "--max-stop", "0", "--tmpdir", tmp, strconv.Itoa(pid))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Wait until memdoctor has stopped the process (its tracer is one of memdoctor's
				// threads) to copy it; for the walk, until it runs again while memdoctor walks.
				deadline := time.Now().Add(60 * time.Second)
				wait := func(what string, done func() bool) {
					for !done() {
						if time.Now().After(deadline) {
							cmd.Process.Kill()
							t.Fatalf("memdoctor never %s process %d: %s", what, pid, stderr.String())
						}
						time.Sleep(200 * time.Microsecond)
					}
				}
				wait("stopped", func() bool { return tracerPid(pid) != 0 })
				if during == "walk" {
					wait("resumed", func() bool { return tracerPid(pid) == 0 })
					if !copyHeld(t, cmd.Process.Pid, tmp) {
						t.Errorf("memdoctor holds no unlinked copy in %s while it walks", tmp)
					}
				} else if st := procState(pid); st != 't' {
					t.Logf("process %d was in state %c when memdoctor got %v", pid, st, sig)
				}
				if names, _ := os.ReadDir(tmp); len(names) > 0 {
					t.Errorf("the copy has a name: %s holds %v", tmp, names)
				}
				cmd.Process.Signal(sig)
				err := cmd.Wait()
				runsAgain(t, pid, heartbeat)
				if names, _ := os.ReadDir(tmp); len(names) > 0 {
					t.Errorf("%s holds %v after memdoctor ended", tmp, names)
				}
				if sig == syscall.SIGINT {
					if err == nil || !strings.Contains(stderr.String(), "runs again") {
						t.Errorf("interrupted memdoctor holders: %v, want a failure that says the process runs again:\n%s", err, stderr.String())
					}
				}
			})
		}
	}
}

// TestHoldersMaxStop: a reading estimated to stop the process longer than --max-stop is
// refused in one line that says how long it would take and the value that allows it, exit 1,
// and the process is never stopped.
func TestHoldersMaxStop(t *testing.T) {
	pid, heartbeat := startHoldersTarget(t, holdersTargetBin, 300_000)
	traced := make(chan bool)
	done := make(chan struct{})
	go func() {
		seen := false
		for {
			select {
			case <-done:
				traced <- seen
				return
			default:
			}
			seen = seen || tracerPid(pid) != 0
			time.Sleep(100 * time.Microsecond)
		}
	}()
	r := memdoctor(t, context.Background(), "holders", "--max-stop", "1ms", strconv.Itoa(pid))
	close(done)
	if <-traced {
		t.Errorf("memdoctor holders --max-stop 1ms stopped process %d", pid)
	}
	line := strings.TrimSpace(r.stderr)
	m := regexp.MustCompile(`would stop it for about (\S+) \(.* to copy at .*\), longer than the 1ms allowed: nothing was stopped; allow it with --max-stop (\S+)$`).FindStringSubmatch(line)
	if r.code != 1 || strings.Contains(line, "\n") || m == nil {
		t.Fatalf("memdoctor holders --max-stop 1ms: exit %d, stderr %q; want exit 1 and one line naming the stop and the --max-stop that allows it", r.code, r.stderr)
	}
	if about, err1 := time.ParseDuration(m[1]); err1 == nil {
		if allow, err2 := time.ParseDuration(m[2]); err2 != nil || allow <= about {
			t.Errorf("the refusal estimates %s and allows it with --max-stop %s", m[1], m[2])
		}
	}
	runsAgain(t, pid, heartbeat)
}

// copyHeld says whether process pid holds a file in dir that no name refers to.
func copyHeld(t *testing.T, pid int, dir string) bool {
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	for _, fd := range fds {
		link, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if strings.HasPrefix(link, dir+"/") && strings.HasSuffix(link, " (deleted)") {
			return true
		}
	}
	return false
}

// TestHoldersRefusals: what memdoctor holders cannot read is refused in one line that says
// what to do, with exit status 1 (2 for a usage error).
func TestHoldersRefusals(t *testing.T) {
	dir := t.TempDir()
	noDWARF := filepath.Join(dir, "no-dwarf")
	if out, err := exec.Command("go", "build", "-ldflags=-w", "-o", noDWARF, "./testdata/holders-target").CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags=-w: %v\n%s", err, out)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	noDWARFPid, _ := startHoldersTarget(t, noDWARF, 1000)
	notACore := filepath.Join(dir, "not-a-core")
	os.WriteFile(notACore, []byte("hello"), 0o600)

	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"holders", strconv.Itoa(sleep.Process.Pid)}, 1, "not a Go program"},
		{[]string{"holders", strconv.Itoa(noDWARFPid)}, 1, "no DWARF debug information"},
		{[]string{"holders", "nope"}, 2, "not a process id"},
		{[]string{"holders", "999999999"}, 1, "exited"},
		{[]string{"holders", notACore, holdersTargetBin}, 1, "not an ELF core file"},
		{[]string{"holders", holdersTargetBin, holdersTargetBin}, 1, "not a core"},
		{[]string{"holders", "--top", "0", "1"}, 2, "at least 1"},
		{[]string{"holders", "--tmpdir", filepath.Join(dir, "nowhere"), "1"}, 2, "--tmpdir"},
	}
	for _, c := range cases {
		r := memdoctor(t, context.Background(), c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("memdoctor %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(c.args, " "), r.code, r.stderr, c.code, c.want)
		}
	}
	if os.Getuid() == 0 {
		// A user who may not trace the process is told which capability to grant.
		pid, _ := startHoldersTarget(t, holdersTargetBin, 1000)
		shared, err := os.MkdirTemp("", "memdoctor-shared")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(shared) })
		os.Chmod(shared, 0o755)
		bin := filepath.Join(shared, "memdoctor")
		b, err := os.ReadFile(memdoctorBin)
		if err != nil || os.WriteFile(bin, b, 0o755) != nil {
			t.Fatal("copying memdoctor where another user can run it:", err)
		}
		cmd := exec.Command(bin, "holders", strconv.Itoa(pid))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), "CAP_SYS_PTRACE") {
			t.Errorf("memdoctor holders as nobody: %v, %q; want a refusal naming CAP_SYS_PTRACE", err, stderr.String())
		}
	}
}

// TestHoldersAcrossBuilds reads the same program built by Go 1.27, and by Go 1.26 without
// Green Tea (whose small-object spans keep their pointer bits elsewhere), and checks the path.
func TestHoldersAcrossBuilds(t *testing.T) {
	builds := map[string]func(t *testing.T) string{
		"go1.27": func(t *testing.T) string {
			return gotool.Build(t, gotool.Go127, ".", "./testdata/holders-target")
		},
		"go1.26-nogreenteagc": func(t *testing.T) string {
			bin := filepath.Join(t.TempDir(), "holders-target")
			cmd := exec.Command("go", "build", "-o", bin, "./testdata/holders-target")
			cmd.Env = append(os.Environ(), "GOEXPERIMENT=nogreenteagc")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOEXPERIMENT=nogreenteagc go build: %v\n%s", err, out)
			}
			return bin
		},
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			bin := build(t)
			pid, heartbeat := startHoldersTarget(t, bin, 20000)
			res := readHolders(t, "main.build", strconv.Itoa(pid))
			runsAgain(t, pid, heartbeat)
			c := res.Culprits[0]
			if len(c.Paths) == 0 || c.Paths[0].Expr != "main.registry[value].payload" || c.Paths[0].Root.Kind != "global" {
				t.Fatalf("%s: want main.registry[value].payload first; got %+v", name, c.Paths)
			}
			if want := strings.TrimPrefix(strings.SplitN(name, "-", 2)[0], "go"); !strings.HasPrefix(res.Target.GoVersion, "go"+want) {
				t.Errorf("read as %s, built with %s", res.Target.GoVersion, name)
			}
		})
	}
}
