package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/modproxy"
)

const agentModule = "github.com/memdoctor/memdoctor/agent"

// TestInstallLatest does what `go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest`
// does on a fresh machine, offline: the memdoctor module as this working tree holds it,
// published as a release (v0.99.0) into a local module proxy, with the agent's module at the
// version its go.mod requires, taken from the commit that version names; an empty module
// cache; no go.work (go install ...@version never reads one), no replace directive, the
// go.sum lines of the published go.sum. The command it builds must run. So a change to the
// agent's module that the tool uses fails here until pinagent pins it (docs/releasing.md).
func TestInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command from an empty module cache")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := modproxy.Hash(repo, "HEAD"); err != nil {
		t.Skipf("no git history here (%v): the agent's pinned version names a commit", err)
	}
	version := requiredAgent(t, repo)
	_, hash, err := modproxy.ParsePseudoVersion(version)
	if err != nil {
		t.Fatalf("go.mod requires the agent at %v; want a pseudo-version until agent/v0.1.0 is tagged", err)
	}
	agentFiles, when, err := modproxy.Commit(repo, hash, "agent")
	if err != nil {
		t.Fatalf("go.mod requires the agent at %s, whose commit is not in this repository's history (%v): run go run ./internal/modproxy/pinagent", version, err)
	}
	rootFiles, err := modproxy.Dir(repo)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	if err := modproxy.Write(proxy, agentModule, version, when, agentFiles); err != nil {
		t.Fatal(err)
	}
	if err := modproxy.Write(proxy, "github.com/memdoctor/memdoctor", "v0.99.0", time.Now(), rootFiles); err != nil {
		t.Fatal(err)
	}
	for _, f := range rootFiles {
		if f.Path == "go.mod" && strings.Contains(string(f.Data), "\nreplace") {
			t.Errorf("go.mod has a replace directive: go install ...@latest refuses it")
		}
	}
	env, err := modproxy.Env(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	cmd := exec.Command("go", "install", "github.com/memdoctor/memdoctor/cmd/memdoctor@latest")
	cmd.Dir = tmp
	cmd.Env = append(env, "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest: %v\n%s\n(the agent at %s: if the tool uses what that commit's agent lacks, commit the agent's change and run go run ./internal/modproxy/pinagent)", err, out, version)
	}
	out, err := exec.Command(filepath.Join(bin, "memdoctor"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v0.99.0") {
		t.Errorf("the installed memdoctor version: %v\n%s", err, out)
	}

	// The agent's go.sum lines are what the go command computes for that version, in both
	// modules that require it, and go.work replaces that very version.
	sums, err := modproxy.Sums(env, agentModule, version)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, filepath.Join(repo, "agent", "prom")} {
		if v := requiredAgent(t, dir); v != version {
			t.Errorf("%s/go.mod requires the agent at %s, the memdoctor module at %s", dir, v, version)
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
	work, err := os.ReadFile(filepath.Join(repo, "go.work"))
	if err != nil || !strings.Contains(string(work), "replace "+agentModule+" "+version+" => ./agent") {
		t.Errorf("go.work does not replace the agent at %s with ./agent (%v):\n%s", version, err, work)
	}
}

// requiredAgent returns the version of the agent's module that dir/go.mod requires.
func requiredAgent(t *testing.T, dir string) string {
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
		if r.Path == agentModule {
			return r.Version
		}
	}
	t.Fatalf("%s/go.mod does not require %s", dir, agentModule)
	return ""
}
