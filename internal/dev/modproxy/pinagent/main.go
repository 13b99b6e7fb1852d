// Command pinagent makes the memdoctor module (and agent/prom) require the repository's nested
// modules (modproxy.PinnedModules: the agent's and leaktest's) each at a commit: the
// pseudo-version proxy.golang.org serves for it, with the go.sum lines the go command computes
// for it, and the go.work replacement that keeps the workspace on its directory.
//
//	go run ./internal/dev/modproxy/pinagent [COMMIT]
//
// Each module is pinned at the last commit that changed it, at or before COMMIT (default
// HEAD). Run it after committing a change to a nested module that the rest of the repository
// uses, and commit what it changes: `go install
// github.com/memdoctor/memdoctor/cmd/memdoctor@latest` builds against the versions pinned
// here, never against the working tree. A release tags agent/vX.Y.Z and leaktest/vX.Y.Z
// instead (docs/releasing.md).
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

	"github.com/memdoctor/memdoctor/internal/dev/modproxy"
)

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
		return errors.New("usage: go run ./internal/dev/modproxy/pinagent [COMMIT]")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return fmt.Errorf("not in the repository's git working tree: %w", err)
	}
	repo := strings.TrimSpace(string(top))
	at := fs.Arg(0)
	if at == "" {
		at = "HEAD"
	}
	for _, m := range modproxy.PinnedModules {
		logArgs := append([]string{"-C", repo, "log", "-1", "--format=%H", at, "--"}, m.Pathspec()...)
		out, err := exec.Command("git", logArgs...).Output()
		if err != nil || len(out) == 0 {
			return fmt.Errorf("no commit at or before %s changed %s/: %v", at, m.Dir, err)
		}
		rev := strings.TrimSpace(string(out))
		version, sums, err := pin(repo, m, rev)
		if err != nil {
			return err
		}
		for _, dir := range m.RequiredBy {
			if err := require(filepath.Join(repo, filepath.FromSlash(dir)), m.Path, version, sums); err != nil {
				return err
			}
		}
		if err := workspace(repo, m, version); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s pinned at %s in the go.mod of %s and in go.work\n", m.Path, version, strings.Join(m.RequiredBy, ", "))
	}
	return nil
}

// pin checks that the working tree's module is the commit's and returns the commit's
// pseudo-version and its go.sum lines.
func pin(repo string, m modproxy.Pinned, rev string) (string, []string, error) {
	hash, err := modproxy.Hash(repo, rev)
	if err != nil {
		return "", nil, err
	}
	diff := exec.Command("git", append([]string{"-C", repo, "status", "--porcelain", "--untracked-files=all", "--"}, m.Pathspec()...)...)
	if out, err := diff.Output(); err != nil || len(out) > 0 {
		return "", nil, fmt.Errorf("%s/ has changes that are not committed (%v):\n%scommit them first: a pin names a commit", m.Dir, err, out)
	}
	if err := exec.Command("git", append([]string{"-C", repo, "diff", "--quiet", hash, "HEAD", "--"}, m.Pathspec()...)...).Run(); err != nil {
		return "", nil, fmt.Errorf("%s/ changed between %.12s and HEAD: pin the last commit that changed it (the default)", m.Dir, hash)
	}
	files, when, err := modproxy.Commit(repo, hash, m.Dir)
	if err != nil {
		return "", nil, err
	}
	version := modproxy.PseudoVersion(when, hash)
	tmp, err := os.MkdirTemp("", "pinagent-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	if err := modproxy.Write(filepath.Join(tmp, "proxy"), m.Path, version, when, files); err != nil {
		return "", nil, err
	}
	env, err := modproxy.Env(filepath.Join(tmp, "proxy"), filepath.Join(tmp, "modcache"))
	if err != nil {
		return "", nil, err
	}
	sums, err := modproxy.Sums(env, m.Path, version)
	return version, sums, err
}

// require sets the requirement of modPath in dir's go.mod and its lines in dir's go.sum.
func require(dir, modPath, version string, sums []string) error {
	cmd := exec.Command("go", "mod", "edit", "-require="+modPath+"@"+version)
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
	// as they are and put the module's where its path sorts.
	var lines []string
	placed := false
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		mod, _, _ := strings.Cut(l, " ")
		if l == "" || mod == modPath {
			continue
		}
		if !placed && mod > modPath {
			lines, placed = append(lines, sums...), true
		}
		lines = append(lines, l)
	}
	if !placed {
		lines = append(lines, sums...)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// workspace points go.work's replacement of the pinned version at the module's directory,
// dropping the old.
func workspace(repo string, m modproxy.Pinned, version string) error {
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
		if r.Old.Path == m.Path {
			args = append(args, "-dropreplace="+m.Path+"@"+r.Old.Version)
		}
	}
	args = append(args, "-replace="+m.Path+"@"+version+"=./"+m.Dir, work)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go work edit: %w: %s", err, out)
	}
	return nil
}
