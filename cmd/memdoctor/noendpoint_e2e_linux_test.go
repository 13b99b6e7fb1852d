package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// buildLabNoPprof builds the lab without any profiling (internal/dev/labrun -tags nopprof).
func buildLabNoPprof(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "labrun")
	if out, err := exec.Command("go", "build", "-tags", "nopprof", "-o", bin, "../../internal/dev/labrun").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nopprof ./internal/dev/labrun: %v\n%s", err, out)
	}
	return bin
}

// startNoPprof starts a lab scenario that links no profiling and returns its pid; the test's
// cleanup stops it with SIGINT and checks that it exits cleanly.
func startNoPprof(t *testing.T, bin, scenario string) int {
	t.Helper()
	cmd := exec.Command(bin, scenario)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.Contains(sc.Text(), "(no pprof)") {
		cmd.Process.Kill()
		t.Fatalf("%s %s said %q", bin, scenario, sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s after being read from its memory: %v", scenario, err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not stop within 20s of SIGINT", scenario)
		}
	})
	return cmd.Process.Pid
}

// heapLeakCulprit checks that the diagnosis finds the heap leak at warning with the culprit
// among its first three.
func heapLeakCulprit(t *testing.T, dir, culprit string) {
	t.Helper()
	d := loadDiagnosis(t, filepath.Join(dir, session.DiagnosisFile))
	for _, f := range d.Findings {
		if f.Kind != "heap-leak" || f.Severity.Rank() < diagnose.Warning.Rank() {
			continue
		}
		for i, c := range f.Culprits {
			if i < 3 && c.Function == culprit {
				return
			}
		}
		t.Errorf("heap-leak's culprits %+v do not name %s in the first three", f.Culprits, culprit)
		return
	}
	t.Errorf("no heap-leak at warning: %+v", d.Findings)
}

// TestWatchPIDWithoutEndpoint watches, by PID, a leaking service that serves nothing and links
// no profiling: watch reads it from its memory, turns its heap profiling on (as allowed), and
// the diagnosis names the leak and its culprit as it does through pprof. The session says
// where its figures came from, what was turned on and how long the process was stopped.
func TestWatchPIDWithoutEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("watches a lab scenario for 40s")
	}
	defer parallel(t)()
	pid := startNoPprof(t, buildLabNoPprof(t), "tcp-reassembly")
	dir := filepath.Join(t.TempDir(), "s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := memdoctor(t, ctx, "watch", "--enable-heap-profiling", "--duration", "40s", "--interval", "5s", "--out", dir, strconv.Itoa(pid))
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	heapLeakCulprit(t, dir, "github.com/memdoctor/memdoctor/lab.(*assembler).bufferSegment")
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Manifest.Notes, "\n")
	for _, want := range []string{"read from the process's memory", "--enable-heap-profiling turned it on", "stopped the process"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q:\n%s", want, notes)
		}
	}
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	fromMemory := 0
	for _, smp := range samples {
		if smp.Go != nil && smp.Go.Source == "process-memory" {
			fromMemory++
		}
	}
	if fromMemory < 30 || len(s.ProfilesOf(session.KindHeap, true)) < 8 || len(s.ProfilesOf(session.KindGoroutine, true)) < 2 {
		t.Errorf("%d Go samples from memory, %d heap and %d goroutine profiles", fromMemory,
			len(s.ProfilesOf(session.KindHeap, true)), len(s.ProfilesOf(session.KindGoroutine, true)))
	}
}

// TestRunWithoutEndpoint runs a leaking program that serves nothing: after looking for a pprof
// endpoint for 5s, run reads it from its memory.
func TestRunWithoutEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a lab scenario for 45s")
	}
	defer parallel(t)()
	dir := filepath.Join(t.TempDir(), "s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := memdoctor(t, ctx, "run", "--enable-heap-profiling", "--duration", "45s", "--interval", "5s", "--out", dir, "--", buildLabNoPprof(t), "tcp-reassembly")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	heapLeakCulprit(t, dir, "github.com/memdoctor/memdoctor/lab.(*assembler).bufferSegment")
}

// TestWatchPIDWithoutEndpointRefusals: what cannot be read from memory is refused in one line,
// with no session left behind.
func TestWatchPIDWithoutEndpointRefusals(t *testing.T) {
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	dir := filepath.Join(t.TempDir(), "s")
	r := memdoctor(t, context.Background(), "watch", "--source", "memory", "--out", dir, strconv.Itoa(sleep.Process.Pid))
	if last := lastLine(r.stderr); r.code != 1 || !strings.Contains(last, "not a Go program") || strings.Count(r.stderr, "not a Go program") != 1 {
		t.Errorf("sleep: exit %d, %q; want exit 1 and a last line saying it is not a Go program", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a refused watch left a session")
	}
	if os.Getuid() != 0 {
		return
	}
	// A user who may not trace the process is told which capability to grant.
	pid := startNoPprof(t, buildLabNoPprof(t), "healthy")
	shared, err := os.MkdirTemp("", "memdoctor-shared")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o777)
	bin := filepath.Join(shared, "memdoctor")
	b, err := os.ReadFile(memdoctorBin)
	if err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal("copying memdoctor where another user can run it:", err)
	}
	cmd := exec.Command(bin, "watch", "--source", "memory", "--out", filepath.Join(shared, "s"), strconv.Itoa(pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CAP_SYS_PTRACE") {
		t.Errorf("memdoctor watch --source memory as nobody: %v, %q; want a refusal naming CAP_SYS_PTRACE", err, out)
	}
}
