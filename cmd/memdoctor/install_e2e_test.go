package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/modproxy"
)

// TestInstallLatest does what `go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest`
// does on a fresh machine, offline: the memdoctor module as this working tree holds it,
// published as a release (v0.99.0, with a pre-release suffix of this run's own) into a local
// module proxy, with each nested module it requires (the agent's, leaktest's:
// modproxy.PinnedModules) at the version its go.mod requires, taken from the commit that
// version names; no go.work (go install ...@version never reads one), no replace directive,
// the go.sum lines of the published go.sum. The command it builds must run. So a change to a
// nested module that the tool uses fails here until pinagent pins it (docs/releasing.md).
//
// The module cache is this machine's (modproxy.SharedEnv), less what the proxy publishes,
// which is fetched from it and removed after: the third-party modules' compiled packages then
// come from the build cache, and only memdoctor's own are compiled.
func TestInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command as go install ...@latest does")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := modproxy.Hash(repo, "HEAD"); err != nil {
		t.Skipf("no git history here (%v): the nested modules' pinned versions name commits", err)
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	versions := map[string]string{}
	for _, m := range modproxy.PinnedModules {
		version := required(t, repo, m.Path)
		_, hash, err := modproxy.ParsePseudoVersion(version)
		if err != nil {
			t.Fatalf("go.mod requires %s at %v; want a pseudo-version until %s/v0.1.0 is tagged", m.Path, err, m.Dir)
		}
		files, when, err := modproxy.Commit(repo, hash, m.Dir)
		if err != nil {
			t.Fatalf("go.mod requires %s at %s, whose commit is not in this repository's history (%v): run go run ./internal/dev/modproxy/pinagent", m.Path, version, err)
		}
		if err := modproxy.Write(proxy, m.Path, version, when, files); err != nil {
			t.Fatal(err)
		}
		versions[m.Path] = version
	}
	rootFiles, err := modproxy.Dir(repo)
	if err != nil {
		t.Fatal(err)
	}
	release := fmt.Sprintf("v0.99.0-install.%d", time.Now().UnixNano())
	if err := modproxy.Write(proxy, "github.com/memdoctor/memdoctor", release, time.Now(), rootFiles); err != nil {
		t.Fatal(err)
	}
	for _, f := range rootFiles {
		if f.Path == "go.mod" && strings.Contains(string(f.Data), "\nreplace") {
			t.Errorf("go.mod has a replace directive: go install ...@latest refuses it")
		}
	}
	env, clean, err := modproxy.SharedEnv(proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := clean(); err != nil {
			t.Errorf("removing what the test published from the module cache: %v", err)
		}
	})
	bin := filepath.Join(tmp, "bin")
	cmd := exec.Command("go", "install", "github.com/memdoctor/memdoctor/cmd/memdoctor@latest")
	cmd.Dir = tmp
	cmd.Env = append(env, "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest: %v\n%s\n(the nested modules at %v: if the tool uses what a pinned commit lacks, commit the change and run go run ./internal/dev/modproxy/pinagent)", err, out, versions)
	}
	out, err := exec.Command(filepath.Join(bin, "memdoctor"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), release) {
		t.Errorf("the installed memdoctor version: %v\n%s", err, out)
	}

	// Each nested module's go.sum lines are what the go command computes for its version, in
	// every module that requires it, and go.work replaces that very version.
	work, err := os.ReadFile(filepath.Join(repo, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modproxy.PinnedModules {
		version := versions[m.Path]
		sums, err := modproxy.Sums(env, m.Path, version)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range m.RequiredBy {
			dir := filepath.Join(repo, filepath.FromSlash(rel))
			if v := required(t, dir, m.Path); v != version {
				t.Errorf("%s/go.mod requires %s at %s, the memdoctor module at %s", dir, m.Path, v, version)
			}
			b, err := os.ReadFile(filepath.Join(dir, "go.sum"))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sums {
				if !slices.Contains(strings.Split(string(b), "\n"), s) {
					t.Errorf("%s/go.sum lacks %q", dir, s)
				}
			}
		}
		if want := "replace " + m.Path + " " + version + " => ./" + m.Dir; !strings.Contains(string(work), want) {
			t.Errorf("go.work does not replace %s at %s with ./%s:\n%s", m.Path, version, m.Dir, work)
		}
	}
}

// required returns the version of modPath that dir/go.mod requires.
func required(t *testing.T, dir, modPath string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var m struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Require {
		if r.Path == modPath {
			return r.Version
		}
	}
	t.Fatalf("%s/go.mod does not require %s", dir, modPath)
	return ""
}
