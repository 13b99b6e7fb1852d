package recorder

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/session"
)

// startNoEndpoint starts collect/memread's test program built without pprof (it serves
// nothing and links no profiling) and returns its pid and the goroutines it said it runs; it
// is killed at the test's end.
func startNoEndpoint(t *testing.T) (pid, goroutines int) {
	t.Helper()
	started, ready := startTestProgram(t, buildProgram(t, "../../collect/memread/testdata/target"), "-parked", "7")
	// "ready PID GOROUTINES"
	if _, err := fmt.Sscanf(ready, "ready %d %d", &pid, &goroutines); err != nil || pid != started {
		t.Fatalf("the target said %q, not ready %d GOROUTINES", ready, started)
	}
	return pid, goroutines
}

// TestWatchPIDReadsMemory: a process that serves neither pprof nor an agent is read from its
// memory: Go samples from every sample, heap profiles from every interval, goroutine profiles
// at the start and the end, and notes that say so, that heap profiling was turned on, and how
// long the process was stopped.
func TestWatchPIDReadsMemory(t *testing.T) {
	needProc(t)
	pid, want := startNoEndpoint(t)
	cfg := watchConfig(t)
	cfg.Duration, cfg.EnableHeapProfiling = 3*time.Second, true
	res, err := WatchPID(context.Background(), cfg, pid)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Fatalf("status %s: %s", res.Status, res.Detail)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	fromMemory := 0
	for _, smp := range samplesOf(t, s) {
		if smp.Go != nil && smp.Go.Source == memread.Source && smp.Go.Goroutines == want {
			fromMemory++
		}
	}
	heaps, gors := s.ProfilesOf(session.KindHeap, true), s.ProfilesOf(session.KindGoroutine, true)
	if fromMemory < 10 || len(heaps) < 3 || len(gors) != 2 || s.Manifest.Target.PID != pid {
		t.Errorf("%d Go samples from memory (%d goroutines each), %d heap and %d goroutine profiles, target %d",
			fromMemory, want, len(heaps), len(gors), s.Manifest.Target.PID)
	}
	notes := strings.Join(s.Manifest.Notes, "\n")
	for _, want := range []string{"listens on no TCP port", "read from the process's memory", "--enable-heap-profiling turned it on", "stopped the process 2 time(s)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q:\n%s", want, notes)
		}
	}
}

// TestWatchPIDMemoryRefused: --source pprof does not fall back to memory, and a heap
// profiling left off is said.
func TestWatchPIDMemoryRefused(t *testing.T) {
	needProc(t)
	pid, _ := startNoEndpoint(t)
	cfg := watchConfig(t)
	cfg.Source = SourcePprof
	if _, err := WatchPID(context.Background(), cfg, pid); err == nil || !strings.Contains(err.Error(), "serve it") {
		t.Errorf("--source pprof on a process without pprof: %v", err)
	}
	cfg = watchConfig(t)
	cfg.Source = SourceMemory
	if _, err := WatchPID(context.Background(), cfg, pid); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(s.Manifest.Notes, "\n"); !strings.Contains(notes, "heap profiling is off") {
		t.Errorf("the notes do not say heap profiling is off:\n%s", notes)
	}
}

// TestRunReadsMemory runs a program that serves nothing (a lab scenario built without
// profiling): after looking for a pprof endpoint, run reads it from its memory and stops it,
// as its parent, for its goroutine profiles, and the recording still ends when it should (a
// stop is not taken for the program's end) with the program running until then.
func TestRunReadsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	needProc(t)
	bin := filepath.Join(t.TempDir(), "labrun")
	if out, err := exec.Command("go", "build", "-tags", "nopprof", "-o", bin, "../dev/labrun").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := Config{Mode: "run", Out: filepath.Join(t.TempDir(), "s"), Duration: 9 * time.Second, Sample: 200 * time.Millisecond,
		Interval: time.Second, Command: []string{bin, "healthy"}, EnableHeapProfiling: true}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Fatalf("status %s: %s", res.Status, res.Detail)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Manifest.Notes, "\n")
	if gors := s.ProfilesOf(session.KindGoroutine, true); len(gors) < 2 || !strings.Contains(notes, "no /debug/pprof/ endpoint found") ||
		!strings.Contains(notes, "stopped the process") {
		t.Errorf("%d goroutine profiles; notes:\n%s", len(gors), notes)
	}
}
