package suite

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanEnv is the environment without what the repository's own tests run under (its go.work).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOWORK=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	return env
}

// A module's workspace keeps its go line (raised to leaktest's least when older) and GODEBUG;
// a user's workspace keeps its modules, absolute, and its replacements, less any copy of
// leaktest, which memdoctor's stands for.
func TestNewWorkspace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"old/go.mod":         "module example.com/old\n\ngo 1.20\n\ngodebug http2client=0\n",
		"ws/go.work":         "go 1.24\n\nuse (\n\t./a\n\t./leaktest\n)\n\nreplace example.com/dep v1.0.0 => ./fork\n\nreplace github.com/memdoctor/memdoctor/leaktest => ./leaktest\n",
		"ws/go.work.sum":     "",
		"ws/a/go.mod":        "module example.com/a\n\ngo 1.24\n",
		"ws/leaktest/go.mod": "module github.com/memdoctor/memdoctor/leaktest\n\ngo 1.24\n",
	})
	w, err := newWorkspace(ctx, filepath.Join(dir, "old"), cleanEnv())
	if err != nil {
		t.Fatal(err)
	}
	if w.Go != leaktestGo || w.raised != "1.20" || !reflect.DeepEqual(w.Godebug, [][2]string{{"http2client", "0"}}) || !reflect.DeepEqual(w.Use, []string{filepath.Join(dir, "old")}) {
		t.Errorf("a module's workspace: %+v", w)
	}
	w, err = newWorkspace(ctx, filepath.Join(dir, "ws", "a"), cleanEnv())
	if err != nil {
		t.Fatal(err)
	}
	if w.Go != "1.24" || w.raised != "" || !reflect.DeepEqual(w.Use, []string{filepath.Join(dir, "ws", "a")}) ||
		len(w.Replace) != 1 || w.Replace[0].New.Path != filepath.Join(dir, "ws", "fork") || w.sum != filepath.Join(dir, "ws", "go.work.sum") {
		t.Errorf("a user's workspace: %+v", w)
	}
	if _, err := newWorkspace(ctx, t.TempDir(), append(cleanEnv(), "GO111MODULE=on")); err != errNoModule {
		t.Errorf("outside a module: %v", err)
	}
}

// Run checks the tests of a module in a user's workspace, built against the workspace's other
// module, each test attributed its own verdict, and leaves the tree as it was.
func TestRunInAWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and checks a package's tests")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.work":         "go 1.24\n\nuse (\n\t./app\n\t./lib\n)\n",
		"lib/go.mod":      "module example.com/lib\n\ngo 1.24\n",
		"lib/lib.go":      "package lib\n\nvar kept [][]byte\n\n// Keep keeps n bytes.\nfunc Keep(n int) { kept = append(kept, make([]byte, n)) }\n",
		"app/go.mod":      "module example.com/app\n\ngo 1.24\n\nrequire example.com/lib v0.0.0\n",
		"app/app.go":      "package app\n\nimport \"example.com/lib\"\n\n// Store stores a request.\nfunc Store(n int) { lib.Keep(n) }\n",
		"app/app_test.go": "package app\n\nimport \"testing\"\n\nfunc TestStore(t *testing.T) { Store(512) }\n\nfunc TestNothing(t *testing.T) {}\n",
	}
	writeFiles(t, dir, files)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Dir: filepath.Join(dir, "app"), TimeLimit: 5 * time.Second, Env: cleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 1 || len(res.Packages[0].Tests) != 2 {
		t.Fatalf("result: %+v", res.Packages)
	}
	got := map[string]*TestResult{}
	for _, tr := range res.Packages[0].Tests {
		got[tr.Name] = tr
	}
	if tr := got["TestStore"]; tr.Verdict != VerdictLeak || !strings.Contains(tr.Message, "allocated under your code at app/app.go:6") || !strings.Contains(tr.Message, "allocated at lib/lib.go:6") {
		t.Errorf("TestStore: %s\n%s", tr.Verdict, tr.Message)
	}
	if tr := got["TestNothing"]; tr.Verdict != VerdictNoLeak {
		t.Errorf("TestNothing: %s %s", tr.Verdict, tr.Reason)
	}
	for name, text := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != text {
			t.Errorf("%s changed", name)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d entries in the workspace's directory, want 3", len(entries))
	}
}
