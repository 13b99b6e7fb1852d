// Command withagent runs a go command that reads no go.work (go get, go mod tidy) in the
// module of the current directory, with the repository's nested modules it requires (the
// agent's, leaktest's: modproxy.PinnedModules) at the versions that go.mod requires, served
// from a local proxy built from the commits the versions name: until those commits are
// pushed, proxy.golang.org cannot serve them.
//
//	go run ./internal/dev/modproxy/withagent get github.com/modelcontextprotocol/go-sdk@v1.8.0
//	go run ./internal/dev/modproxy/withagent mod tidy
//	(cd agent/prom && go run ../../internal/dev/modproxy/withagent mod tidy)
//
// Other modules come from GOPROXY as usual; go.sum verifies the pinned modules' lines.
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

	"github.com/memdoctor/memdoctor/internal/dev/modproxy"
)

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
		return errors.New("usage: go run ./internal/dev/modproxy/withagent GO-COMMAND [ARGS...] (get, mod tidy, ...)")
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
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("not in the repository's git working tree: %w", err)
	}
	tmp, err := os.MkdirTemp("", "withagent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var served []string
	for _, pm := range modproxy.PinnedModules {
		version := ""
		for _, r := range m.Require {
			if r.Path == pm.Path {
				version = r.Version
			}
		}
		if version == "" {
			continue // this module does not require it
		}
		_, hash, err := modproxy.ParsePseudoVersion(version)
		if err != nil {
			return fmt.Errorf("this module's requirement of %s: %w", pm.Path, err)
		}
		files, when, err := modproxy.Commit(strings.TrimSpace(string(top)), hash, pm.Dir)
		if err != nil {
			return err
		}
		if err := modproxy.Write(tmp, pm.Path, version, when, files); err != nil {
			return err
		}
		served = append(served, pm.Path)
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
		"GONOSUMDB="+strings.Join(served, ","), "GOFLAGS=-mod=mod")
	return cmd.Run()
}
