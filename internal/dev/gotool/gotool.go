// Package gotool builds the programs of tests that need another Go toolchain than the one
// installed: the goroutineleak profile needs Go 1.27's runtime (or Go 1.26 built with
// GOEXPERIMENT=goroutineleakprofile). The go command fetches the toolchain through the module
// proxy (GOTOOLCHAIN=go1.27.0); a test skips, saying so, only when that fails.
package gotool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Go127 is the Go 1.27 toolchain the goroutineleak tests build with.
const Go127 = "go1.27.0"

var checked sync.Map // version -> *check

type check struct {
	once sync.Once
	err  error
	out  string
}

// Require skips t unless the go command can run the toolchain version (fetching it through
// the module proxy on first use).
func Require(t testing.TB, version string) {
	t.Helper()
	v, _ := checked.LoadOrStore(version, &check{})
	c := v.(*check)
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "version")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+version)
		out, err := cmd.CombinedOutput()
		c.out = strings.TrimSpace(string(out))
		if err == nil && !strings.Contains(c.out, version+" ") {
			err = exec.ErrNotFound
		}
		c.err = err
	})
	if c.err != nil {
		t.Skipf("the %s toolchain cannot be fetched (GOTOOLCHAIN=%s go version: %v: %s): this test needs its runtime", version, version, c.err, lastLine(c.out))
	}
}

// Build builds the main package pkg (a path relative to dir, such as "./testdata/leaky")
// with the toolchain version and returns the binary's path, in a temporary directory of t.
// env adds to the build's environment (GOEXPERIMENT=...). It skips t when the toolchain
// cannot be fetched, and fails it when the build fails.
func Build(t testing.TB, version, dir, pkg string, env ...string) string {
	t.Helper()
	Require(t, version)
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOTOOLCHAIN="+version), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOTOOLCHAIN=%s go build %s: %v\n%s", version, pkg, err, out)
	}
	return bin
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
