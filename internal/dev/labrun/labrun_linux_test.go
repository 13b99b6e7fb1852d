package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memdoctor/memdoctor/collect/memread"
)

// TestNoPprofLinksNoProfiling: built with the nopprof tag, a scenario links no profiling (the
// linker turned heap profiling off: runtime.MemProfileRate 0), serves no pprof, and stops
// cleanly on SIGINT.
func TestNoPprofLinksNoProfiling(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "labrun")
	if out, err := exec.Command("go", "build", "-tags", "nopprof", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nopprof: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "healthy")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.Contains(sc.Text(), "serving on http://127.0.0.1:") || !strings.HasSuffix(sc.Text(), "(no pprof)") {
		t.Fatalf("first line %q", sc.Text())
	}
	r, err := memread.Open(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rate, err := r.MemProfileRate()
	if err != nil || rate != 0 || r.LinksProfiling() {
		t.Errorf("MemProfileRate %d (%v), links profiling %v: want 0 and false", rate, err, r.LinksProfiling())
	}
	r.Close()
	cmd.Process.Signal(syscall.SIGINT)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("labrun healthy after SIGINT: %v", err)
	}
}
