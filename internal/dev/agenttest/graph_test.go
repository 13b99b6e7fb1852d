package agenttest

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

const agentModule = "github.com/memdoctor/memdoctor/agent"

// TestAgentGraph is what a service that embeds the agent gets: the agent's module, as this
// working tree holds it, published as v0.1.0 into a local module proxy; a new module that
// imports the agent and agent/auto runs `go get` on it with an empty module cache. Its module
// graph must hold the agent's module and nothing else, and its packages the agent's and the
// standard library's.
func TestAgentGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a new module")
	}
	tmp := t.TempDir()
	files, err := modproxy.Dir("../../../agent")
	if err != nil {
		t.Fatal(err)
	}
	proxy := filepath.Join(tmp, "proxy")
	if err := modproxy.Write(proxy, agentModule, "v0.1.0", time.Now(), files); err != nil {
		t.Fatal(err)
	}
	env, err := modproxy.Env(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(tmp, "service")
	write(t, filepath.Join(svc, "go.mod"), "module example.com/service\n\ngo 1.25.0\n")
	write(t, filepath.Join(svc, "main.go"), `package main

import (
	"context"

	"github.com/memdoctor/memdoctor/agent"
	_ "github.com/memdoctor/memdoctor/agent/auto"
)

func main() {
	a, err := agent.Start(context.Background())
	if err == nil {
		a.Stop(context.Background())
	}
}
`)
	goCmd(t, svc, env, "get", agentModule+"@latest")
	modules := goCmd(t, svc, env, "list", "-m", "all")
	t.Logf("go list -m all:\n%s", modules)
	if want := "example.com/service\n" + agentModule + " v0.1.0"; modules != want {
		t.Errorf("the module graph of a service that imports only the agent:\n%s\nwant:\n%s", modules, want)
	}
	graph := goCmd(t, svc, env, "mod", "graph")
	t.Logf("go mod graph:\n%s", graph)
	var edges []string // between modules; the go@ and toolchain@ lines name Go's version
	for _, line := range strings.Split(graph, "\n") {
		if _, to, _ := strings.Cut(line, " "); !strings.HasPrefix(to, "go@") && !strings.HasPrefix(to, "toolchain@") {
			edges = append(edges, line)
		}
	}
	if want := []string{"example.com/service " + agentModule + "@v0.1.0"}; !slices.Equal(edges, want) {
		t.Errorf("go mod graph: the edges between modules are %q, want %q", edges, want)
	}
	// Every package the service builds is the standard library's, the agent's or its own.
	deps := goCmd(t, svc, env, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Module.Path}}{{end}}", ".")
	var agentPkgs []string
	for _, line := range strings.Split(deps, "\n") {
		pkg, mod, _ := strings.Cut(line, " ")
		switch mod {
		case agentModule:
			agentPkgs = append(agentPkgs, pkg)
		case "example.com/service":
		default:
			t.Errorf("package %s of module %q in the service's build", pkg, mod)
		}
	}
	if !slices.Contains(agentPkgs, agentModule) || !slices.Contains(agentPkgs, agentModule+"/auto") {
		t.Errorf("the agent's packages in the build: %q", agentPkgs)
	}
	goCmd(t, svc, env, "build", "-o", filepath.Join(tmp, "service.bin"), ".")
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
