// Package modtest is what the graph tests of the repository's nested modules (the agent's,
// leaktest's) share: a module of this tree published into a local module proxy, a new module
// beside it with an empty module cache, the go command run there, and the check that its
// module graph holds that module and nothing else.
package modtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/modproxy"
)

// Service is the module that requires the published one.
const Service = "example.com/service"

// Publish publishes the module in dir (as this working tree holds it) as module@v0.1.0 into a
// local module proxy under tmp, and returns the go command's environment that reads it with an
// empty module cache, and the new module's directory (a go.mod is written there).
func Publish(t *testing.T, tmp, dir, module string) (env []string, svc string) {
	t.Helper()
	files, err := modproxy.Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(tmp, "proxy")
	if err := modproxy.Write(proxy, module, "v0.1.0", time.Now(), files); err != nil {
		t.Fatal(err)
	}
	env, err = modproxy.Env(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	svc = filepath.Join(tmp, "service")
	Write(t, filepath.Join(svc, "go.mod"), "module "+Service+"\n\ngo 1.25.0\n")
	return env, svc
}

// OnlyModule checks that the module graph of svc (after go get module@latest) holds svc and
// module at v0.1.0, and that the one edge between modules is svc's to module.
func OnlyModule(t *testing.T, svc string, env []string, module, who string) {
	t.Helper()
	Go(t, svc, env, "get", module+"@latest")
	modules := Go(t, svc, env, "list", "-m", "all")
	t.Logf("go list -m all:\n%s", modules)
	if want := Service + "\n" + module + " v0.1.0"; modules != want {
		t.Errorf("the module graph of %s:\n%s\nwant:\n%s", who, modules, want)
	}
	var edges []string // between modules; the go@ and toolchain@ lines name Go's version
	for _, line := range strings.Split(Go(t, svc, env, "mod", "graph"), "\n") {
		if _, to, _ := strings.Cut(line, " "); !strings.HasPrefix(to, "go@") && !strings.HasPrefix(to, "toolchain@") {
			edges = append(edges, line)
		}
	}
	if want := []string{Service + " " + module + "@v0.1.0"}; !slices.Equal(edges, want) {
		t.Errorf("go mod graph: the edges between modules are %q, want %q", edges, want)
	}
}

// Write writes a file, making its directory.
func Write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Go runs the go command in dir with env and returns its standard output, trimmed.
func Go(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}
