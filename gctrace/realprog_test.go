package gctrace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/internal/dev/gotool"
)

// childEnv makes the test binary run as the traced program of
// TestRealProgram instead of running the tests.
const childEnv = "MEMDOCTOR_GCTRACE_TEST_CHILD"

const childSays = "child: allocating"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		runChild()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var sink [][]byte

// childMetrics are the runtime's own numbers, read right after the last
// (forced) cycle, for the parent to compare with the trace.
var childMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/gc/cycles/forced:gc-cycles",
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
	"/sched/gomaxprocs:threads",
}

const childForced = 3

func runChild() {
	fmt.Fprintln(os.Stderr, childSays)
	for i := 0; i < 4000; i++ { // ~128 MiB of garbage: several automatic cycles
		sink = append(sink, make([]byte, 32<<10))
		if len(sink) > 300 {
			sink = sink[:0]
		}
	}
	// No cycle of its own from here on: the forced ones only, so that the trace and the
	// metrics count the same cycles.
	debug.SetGCPercent(-1)
	for i := 0; i < childForced; i++ {
		runtime.GC()
	}
	samples := make([]metrics.Sample, len(childMetrics))
	for i, name := range childMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	out := map[string]uint64{}
	for _, s := range samples {
		out[s.Name] = s.Value.Uint64()
	}
	json.NewEncoder(os.Stdout).Encode(out)
	// runtime.GC returns once its cycle is done, while the thread that ended it may still be
	// writing the cycle's trace line: let it finish before the process exits.
	time.Sleep(200 * time.Millisecond)
}

// TestRealProgram runs a Go program under GODEBUG=gctrace=1 and checks the
// parsed trace against the runtime's own metrics.
func TestRealProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=1", "GODEBUG=gctrace=1,scavtrace=1,gcpacertrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.Bytes())
	}
	var m map[string]uint64
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("child metrics %q: %v", stdout.Bytes(), err)
	}

	// Every stderr line but the child's own is runtime trace.
	lines := bufio.NewScanner(bytes.NewReader(stderr.Bytes()))
	for lines.Scan() {
		if l := lines.Text(); gctrace.IsRuntimeTrace(l) == (l == childSays) {
			t.Errorf("IsRuntimeTrace(%q) = %v", l, l != childSays)
		}
	}

	var cycles []gctrace.Cycle
	s := gctrace.NewScanner(bytes.NewReader(stderr.Bytes()))
	for s.Scan() {
		cycles = append(cycles, s.Cycle())
	}
	if s.Err() != nil || s.Skipped() != 0 {
		t.Fatalf("Scanner: err %v, %d skipped\n%s", s.Err(), s.Skipped(), stderr.Bytes())
	}
	// A background cycle that started just before the child read its metrics is counted
	// there, but its line comes at its end, after the child exited: one line fewer is right.
	total := m["/gc/cycles/total:gc-cycles"]
	if n := uint64(len(cycles)); (n != total && n+1 != total) || total < childForced+1 {
		t.Fatalf("parsed %d cycles, runtime counted %d (want > %d)\n%s", len(cycles), total, childForced, stderr.Bytes())
	}
	forcedN := 0
	for i, c := range cycles {
		if c.N != i+1 {
			t.Errorf("cycle %d is numbered %d", i+1, c.N)
		}
		if i > 0 && c.At < cycles[i-1].At {
			t.Errorf("gc %d @%v before gc %d @%v", c.N, c.At, cycles[i-1].N, cycles[i-1].At)
		}
		if !c.HasStacksGlobals || c.Goal == 0 || c.LeakCheck {
			t.Errorf("gc %d: HasStacksGlobals %v, Goal %d, LeakCheck %v", c.N, c.HasStacksGlobals, c.Goal, c.LeakCheck)
		}
		forcedN += btoi(c.Forced)
	}
	if uint64(forcedN) != m["/gc/cycles/forced:gc-cycles"] || forcedN != childForced {
		t.Errorf("%d cycles marked forced; runtime counted %d; the child forced %d",
			forcedN, m["/gc/cycles/forced:gc-cycles"], childForced)
	}
	last := cycles[len(cycles)-1]
	mib := func(name string) uint64 { return m[name] >> 20 << 20 }
	if !last.Forced || last.HeapLive != mib("/gc/heap/live:bytes") ||
		last.Stacks != mib("/gc/scan/stack:bytes") || last.Globals != mib("/gc/scan/globals:bytes") ||
		uint64(last.Procs) != m["/sched/gomaxprocs:threads"] {
		t.Errorf("last cycle %+v disagrees with the runtime's metrics %v", last, m)
	}
}

// TestRealLeakCheck runs a go1.27.0 program that writes the goroutineleak profile twice and
// forces one ordinary GC: the two leak-detection cycles are marked LeakCheck and Forced, the
// ordinary one only Forced, and the counts agree with the runtime's.
func TestRealLeakCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go 1.27 program")
	}
	bin := gotool.Build(t, gotool.Go127, ".", "./testdata/leakcheck")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.Bytes())
	}
	var m map[string]uint64
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
		t.Fatalf("metrics %q: %v", stdout.Bytes(), err)
	}
	s := gctrace.NewScanner(bytes.NewReader(stderr.Bytes()))
	var cycles, forcedN, leakN int
	for s.Scan() {
		c := s.Cycle()
		cycles++
		forcedN += btoi(c.Forced)
		leakN += btoi(c.LeakCheck)
		if c.LeakCheck && !c.Forced {
			t.Errorf("gc %d checked for leaks but is not marked forced", c.N)
		}
	}
	if s.Err() != nil || s.Skipped() != 0 {
		t.Fatalf("Scanner: err %v, %d skipped\n%s", s.Err(), s.Skipped(), stderr.Bytes())
	}
	if leakN != 2 || forcedN != 3 || uint64(forcedN) != m["/gc/cycles/forced:gc-cycles"] || uint64(cycles) != m["/gc/cycles/total:gc-cycles"] {
		t.Errorf("%d cycles, %d forced, %d checking for leaks; the runtime counted %v; want 2 leak checks and 3 forced\n%s",
			cycles, forcedN, leakN, m, stderr.Bytes())
	}
}
