// Command withagent runs a go command that reads no go.work (go get, go mod tidy) in the
// module of the current directory, with the agent's module at the version that go.mod
// requires served from a local proxy built from the commit the version names: until that
// commit is pushed, proxy.golang.org cannot serve it.
//
//	go run ./internal/modproxy/withagent get github.com/modelcontextprotocol/go-sdk@v1.8.0
//	go run ./internal/modproxy/withagent mod tidy
//	(cd agent/prom && go run ../../internal/modproxy/withagent mod tidy)
//
// Other modules come from GOPROXY as usual; go.sum verifies the agent's lines.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memdoctor/memdoctor/internal/modproxy"
)

const agentModule = "github.com/memdoctor/memdoctor/agent"

func main() {
	err := run(os.Stdout, os.Stderr, os.Args[1:])
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "withagent:", err)
		os.Exit(1)
	}
}

func run(stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: go run ./internal/modproxy/withagent GO-COMMAND [ARGS...] (get, mod tidy, ...)")
	}
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		return fmt.Errorf("go mod edit -json: %w", err)
	}
	var m struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return err
	}
	version := ""
	for _, r := range m.Require {
		if r.Path == agentModule {
			version = r.Version
		}
	}
	_, hash, err := modproxy.ParsePseudoVersion(version)
	if err != nil {
		return fmt.Errorf("this module's agent requirement: %w", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("not in the repository's git working tree: %w", err)
	}
	files, when, err := modproxy.Commit(strings.TrimSpace(string(top)), hash, "agent")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "withagent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := modproxy.Write(tmp, agentModule, version, when, files); err != nil {
		return err
	}
	proxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		return fmt.Errorf("go env GOPROXY: %w", err)
	}
	abs, err := filepath.Abs(tmp)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), "GOWORK=off",
		"GOPROXY=file://"+filepath.ToSlash(abs)+","+strings.TrimSpace(string(proxy)),
		"GONOSUMDB="+agentModule, "GOFLAGS=-mod=mod")
	return cmd.Run()
}
