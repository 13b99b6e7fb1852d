package leaktestproof

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

const leaktestModule = "github.com/memdoctor/memdoctor/leaktest"

// TestLeaktestGraph is what a module whose tests use leaktest gets: leaktest's module, as
// this working tree holds it, published as v0.1.0 into a local module proxy; a new module
// whose test imports leaktest runs `go get` on it with an empty module cache. Its module graph
// must hold leaktest's module and nothing else, and the packages its tests build the
// standard library's, leaktest's and its own.
func TestLeaktestGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a new module")
	}
	tmp := t.TempDir()
	files, err := modproxy.Dir("../../../leaktest")
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(tmp, "proxy")
	if err := modproxy.Write(proxy, leaktestModule, "v0.1.0", time.Now(), files); err != nil {
		t.Fatal(err)
	}
	env, err := modproxy.Env(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(tmp, "service")
	write(t, filepath.Join(svc, "go.mod"), "module example.com/service\n\ngo 1.25.0\n")
	write(t, filepath.Join(svc, "store.go"), `package service

// Store remembers what it is told.
type Store struct{ seen map[string][]byte }

func (s *Store) Remember(k string, v []byte) { s.seen[k] = v }
`)
	write(t, filepath.Join(svc, "store_test.go"), `package service

import (
	"testing"

	"github.com/memdoctor/memdoctor/leaktest"
)

func TestStore(t *testing.T) {
	s := &Store{seen: map[string][]byte{}}
	leaktest.Loop(t, func() { s.Remember("k", make([]byte, 8)) })
}
`)
	goCmd(t, svc, env, "get", leaktestModule+"@latest")
	modules := goCmd(t, svc, env, "list", "-m", "all")
	t.Logf("go list -m all:\n%s", modules)
	if want := "example.com/service\n" + leaktestModule + " v0.1.0"; modules != want {
		t.Errorf("the module graph of a module whose tests import only leaktest:\n%s\nwant:\n%s", modules, want)
	}
	graph := goCmd(t, svc, env, "mod", "graph")
	var edges []string // between modules; the go@ and toolchain@ lines name Go's version
	for _, line := range strings.Split(graph, "\n") {
		if _, to, _ := strings.Cut(line, " "); !strings.HasPrefix(to, "go@") && !strings.HasPrefix(to, "toolchain@") {
			edges = append(edges, line)
		}
	}
	if want := []string{"example.com/service " + leaktestModule + "@v0.1.0"}; !slices.Equal(edges, want) {
		t.Errorf("go mod graph: the edges between modules are %q, want %q", edges, want)
	}
	// Every package the tests build is the standard library's, leaktest's or the module's own.
	deps := goCmd(t, svc, env, "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}|{{if .Module}}{{.Module.Path}}{{end}}{{end}}", ".")
	var leaktestPkgs []string
	for _, line := range strings.Split(deps, "\n") {
		pkg, mod, _ := strings.Cut(line, "|")
		switch {
		case mod == leaktestModule:
			leaktestPkgs = append(leaktestPkgs, pkg)
		case mod == "example.com/service", mod == "" && pkg == "example.com/service.test": // the test's main
		default:
			t.Errorf("package %s of module %q in the tests' build", pkg, mod)
		}
	}
	if !slices.Contains(leaktestPkgs, leaktestModule) || !slices.Contains(leaktestPkgs, leaktestModule+"/trend") {
		t.Errorf("leaktest's packages in the tests' build: %q", leaktestPkgs)
	}
	goCmd(t, svc, env, "vet", ".")
	goCmd(t, svc, env, "test", "-c", "-o", filepath.Join(tmp, "service.test"), ".")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs the go command in dir with env and returns its standard output, trimmed.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
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
