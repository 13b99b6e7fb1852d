package modproxy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SharedEnv's command fetches from the proxy into the machine's module cache, and clean takes
// out what was not there before, and nothing else.
func TestSharedEnvCleansUp(t *testing.T) {
	modcache := t.TempDir()
	t.Setenv("GOMODCACHE", modcache)
	proxy := t.TempDir()
	for _, m := range []string{"example.com/kept", "example.com/Fresh"} {
		files := []File{{"go.mod", []byte("module " + m + "\n\ngo 1.24\n")}, {"a.go", []byte("package a\n")}}
		if err := Write(proxy, m, "v0.1.0", time.Now(), files); err != nil {
			t.Fatal(err)
		}
	}
	download := func(env []string, mod string) {
		t.Helper()
		cmd := exec.Command("go", "mod", "download", mod+"@v0.1.0")
		cmd.Env, cmd.Dir = env, t.TempDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod download %s: %v\n%s", mod, err, out)
		}
	}
	env, err := Env(proxy, modcache)
	if err != nil {
		t.Fatal(err)
	}
	download(env, "example.com/kept")

	env, clean, err := SharedEnv(proxy)
	if err != nil {
		t.Fatal(err)
	}
	download(env, "example.com/Fresh")
	fresh := filepath.Join(modcache, "example.com", "!fresh@v0.1.0", "a.go")
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("the shared cache does not hold what was fetched: %v", err)
	}
	if err := clean(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{fresh, filepath.Join(modcache, "cache", "download", "example.com", "!fresh", "@v", "v0.1.0.zip")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(modcache, "cache", "download", "example.com", "!fresh", "@v", "list")); err == nil && strings.Contains(string(b), "v0.1.0") {
		t.Errorf("the version list still names it: %q", b)
	}
	for _, kept := range []string{filepath.Join(modcache, "example.com", "kept@v0.1.0", "a.go"), filepath.Join(modcache, "cache", "download", "example.com", "kept", "@v", "v0.1.0.zip")} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("what the cache held before went: %v", err)
		}
	}
}
