// Command pinagent makes the memdoctor module (and agent/prom) require the agent's module at
// a commit: the pseudo-version proxy.golang.org serves for it, with the go.sum lines the go
// command computes for it, and the go.work replacement that keeps the workspace on ./agent.
//
//	go run ./internal/modproxy/pinagent [COMMIT]
//
// COMMIT defaults to the last commit that changed the agent's module. Run it after committing
// a change to the agent's module that the rest of the repository uses, and commit what it
// changes: `go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest` builds against the
// version pinned here, never against the working tree. A release tags agent/vX.Y.Z instead
// (docs/releasing.md).
package main

import (
	"encoding/json"
	"errors"
	"flag"
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
	if err := run(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pinagent:", err)
		os.Exit(1)
	}
}

func run(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("pinagent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return errors.New("usage: go run ./internal/modproxy/pinagent [COMMIT]")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("not in the repository's git working tree: %w", err)
	}
	repo := strings.TrimSpace(string(top))
	rev := fs.Arg(0)
	if rev == "" {
		out, err := exec.Command("git", "-C", repo, "log", "-1", "--format=%H", "--", "agent", ":(exclude)agent/prom").Output()
		if err != nil || len(out) == 0 {
			return fmt.Errorf("no commit changed agent/: %v", err)
		}
		rev = strings.TrimSpace(string(out))
	}
	version, sums, err := pin(repo, rev)
	if err != nil {
		return err
	}
	for _, dir := range []string{repo, filepath.Join(repo, "agent", "prom")} {
		if err := require(dir, version, sums); err != nil {
			return err
		}
	}
	if err := workspace(repo, version); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s pinned at %s in go.mod, agent/prom/go.mod and go.work\n", agentModule, version)
	return nil
}

// pin checks that the working tree's agent module is the commit's and returns the commit's
// pseudo-version and its go.sum lines.
func pin(repo, rev string) (string, []string, error) {
	hash, err := modproxy.Hash(repo, rev)
	if err != nil {
		return "", nil, err
	}
	diff := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=all", "--", "agent", ":(exclude)agent/prom")
	if out, err := diff.Output(); err != nil || len(out) > 0 {
		return "", nil, fmt.Errorf("agent/ has changes that are not committed (%v):\n%scommit them first: a pin names a commit", err, out)
	}
	if err := exec.Command("git", "-C", repo, "diff", "--quiet", hash, "HEAD", "--", "agent", ":(exclude)agent/prom").Run(); err != nil {
		return "", nil, fmt.Errorf("agent/ changed between %.12s and HEAD: pin the last commit that changed it (the default)", hash)
	}
	files, when, err := modproxy.Commit(repo, hash, "agent")
	if err != nil {
		return "", nil, err
	}
	version := modproxy.PseudoVersion(when, hash)
	tmp, err := os.MkdirTemp("", "pinagent-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	if err := modproxy.Write(filepath.Join(tmp, "proxy"), agentModule, version, when, files); err != nil {
		return "", nil, err
	}
	env, err := modproxy.Env(filepath.Join(tmp, "proxy"), filepath.Join(tmp, "modcache"))
	if err != nil {
		return "", nil, err
	}
	sums, err := modproxy.Sums(env, agentModule, version)
	return version, sums, err
}

// require sets the requirement in dir's go.mod and the agent's lines in its go.sum.
func require(dir, version string, sums []string) error {
	cmd := exec.Command("go", "mod", "edit", "-require="+agentModule+"@"+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod edit in %s: %w: %s", dir, err, out)
	}
	path := filepath.Join(dir, "go.sum")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// go.sum is sorted by module path, then by version in semver order: keep the other lines
	// as they are and put the agent's where its path sorts.
	var lines []string
	placed := false
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		mod, _, _ := strings.Cut(l, " ")
		if l == "" || mod == agentModule {
			continue
		}
		if !placed && mod > agentModule {
			lines, placed = append(lines, sums...), true
		}
		lines = append(lines, l)
	}
	if !placed {
		lines = append(lines, sums...)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// workspace points go.work's replacement of the pinned version at ./agent, dropping the old.
func workspace(repo, version string) error {
	work := filepath.Join(repo, "go.work")
	out, err := exec.Command("go", "work", "edit", "-json", work).Output()
	if err != nil {
		return fmt.Errorf("go work edit -json %s: %w", work, err)
	}
	var w struct {
		Replace []struct {
			Old struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &w); err != nil {
		return fmt.Errorf("go work edit -json %s: %w", work, err)
	}
	args := []string{"work", "edit"}
	for _, r := range w.Replace {
		if r.Old.Path == agentModule {
			args = append(args, "-dropreplace="+agentModule+"@"+r.Old.Version)
		}
	}
	args = append(args, "-replace="+agentModule+"@"+version+"=./agent", work)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go work edit: %w: %s", err, out)
	}
	return nil
}
