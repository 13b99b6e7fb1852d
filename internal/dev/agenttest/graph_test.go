package agenttest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/internal/dev/modproxy/modtest"
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
	env, svc := modtest.Publish(t, tmp, "../../../agent", agentModule)
	modtest.Write(t, filepath.Join(svc, "main.go"), `package main

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
	modtest.OnlyModule(t, svc, env, agentModule, "a service that imports only the agent")
	// Every package the service builds is the standard library's, the agent's or its own.
	deps := modtest.Go(t, svc, env, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Module.Path}}{{end}}", ".")
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
	modtest.Go(t, svc, env, "build", "-o", filepath.Join(tmp, "service.bin"), ".")
}
