package leaktestproof

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/internal/dev/gotool"
	"github.com/memdoctor/memdoctor/internal/dev/modproxy/modtest"
)

// TestGoroutineLeakProvedOnGo127: under Go 1.27, whose goroutineleak profile proves a
// goroutine leaked when it is blocked on what no running goroutine can reach, a goroutine
// leak's failure says how many of the growing goroutines the profile proves leaked.
func TestGoroutineLeakProvedOnGo127(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a test with the Go 1.27 toolchain")
	}
	gotool.Require(t, gotool.Go127)
	leaktestDir, err := filepath.Abs("../../../leaktest")
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "orphans")
	modtest.Write(t, filepath.Join(mod, "go.mod"), "module example.com/orphans\n\ngo 1.25.0\n\nrequire "+leaktestModule+" v0.0.0\n\nreplace "+leaktestModule+" => "+leaktestDir+"\n")
	modtest.Write(t, filepath.Join(mod, "orphans_test.go"), `package orphans

import (
	"testing"

	"github.com/memdoctor/memdoctor/leaktest"
)

// ask starts a worker whose answer nobody will ever read: its channel is the worker's alone.
func ask() {
	answer := make(chan int)
	go func() { answer <- 42 }()
}

func TestAsk(t *testing.T) {
	leaktest.Loop(t, ask, leaktest.GoroutinesOnly())
}
`)
	cmd := exec.Command("go", "test", "-count=1", "-v", ".")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+gotool.Go127)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	t.Logf("the test's output:\n%s", out)
	if err == nil {
		t.Fatal("the leaking test passed")
	}
	for _, want := range []string{"goroutines keep growing", "more goroutines [chan send]", "Go's goroutineleak profile proves"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q", want)
		}
	}
}
