package process_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/process"
)

// TestSetMemProfileRate: the one write memdoctor makes to a process turns on the heap
// profiling of a program that links none (its rate starts at 0), writes nothing for a rate
// out of bounds or to a core, and leaves the program running.
func TestSetMemProfileRate(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "holders-target")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/memdoctor/testdata/holders-target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	beat := filepath.Join(t.TempDir(), "beat")
	cmd := exec.Command(bin, "-objects", "2000", "-heartbeat", beat)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if sc := bufio.NewScanner(out); !sc.Scan() || !strings.HasSuffix(sc.Text(), "ready") {
		t.Fatal("the target never said ready")
	}
	tg, err := process.Attach(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for _, bad := range []int64{0, -1, process.MaxMemProfileRate + 1} {
		if _, err := tg.SetMemProfileRate(bad); err == nil {
			t.Errorf("rate %d accepted", bad)
		}
	}
	old, err := tg.SetMemProfileRate(512 << 10)
	if err != nil || old != 0 {
		t.Fatalf("SetMemProfileRate: old %d, %v; want 0 (a program without profiling)", old, err)
	}
	if old, err := tg.SetMemProfileRate(512 << 10); err != nil || old != 512<<10 {
		t.Errorf("again: old %d, %v", old, err)
	}
	syms, err := tg.Symbols("runtime.MemProfileRate")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tg.Memory().Uint64(syms["runtime.MemProfileRate"].Addr); err != nil || v != 512<<10 {
		t.Errorf("runtime.MemProfileRate reads %d, %v", v, err)
	}
	// It runs on: its heartbeat moves.
	first := readBeat(t, beat)
	deadline := time.Now().Add(10 * time.Second)
	for readBeat(t, beat) == first {
		if time.Now().After(deadline) {
			t.Fatal("the target's heartbeat stopped after the write")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readBeat(t *testing.T, path string) int {
	b, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(string(b))
	return n
}

// TestSetMemProfileRateRefusesCores: a core is never written.
func TestSetMemProfileRateRefusesCores(t *testing.T) {
	core, exe := makeCore(t)
	tg, err := process.OpenCore(core, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := tg.SetMemProfileRate(512 << 10); err == nil {
		t.Error("a core accepted a write")
	}
}
