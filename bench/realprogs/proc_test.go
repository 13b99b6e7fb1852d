package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid still runs: a zombie waiting for its reaper counts as gone.
func alive(pid int) bool {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
			return false
		}
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

func TestWaitReadyProcessExits(t *testing.T) {
	p, err := startProcess("/bin/sh", []string{"-c", "exit 3"}, nil, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	err = waitReady(context.Background(), p, localURL(port, "/debug/pprof/"), time.Hour)
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("waitReady = %v; want the exit reported", err)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ps, err := freePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: zero or repeated", ps)
		}
		seen[p] = true
	}
}

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "f.go"), []byte("package b\n"), 0o444)
	os.Symlink("f.go", filepath.Join(src, "a", "b", "link"))
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dst, "a", "b", "f.go"))
	if err != nil || string(b) != "package b\n" {
		t.Fatalf("copied file: %q, %v", b, err)
	}
	// The module cache is read-only; the copy must be writable so prepare can add to it.
	if err := os.WriteFile(filepath.Join(dst, "a", "b", "f.go"), []byte("x"), 0o644); err != nil {
		t.Errorf("copy not writable: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "a", "b", "link")); err == nil {
		t.Error("symlink copied; module zips have none and the copy should not follow them")
	}
}

func TestCacheKey(t *testing.T) {
	p := &program{pkg: "github.com/caddyserver/caddy/v2/cmd/caddy", toolchain: "go1.19.13", install: true}
	if got := cacheKey(p, version{version: "v2.6.3"}); got != "github.com_caddyserver_caddy_v2_cmd_caddy@v2.6.3-go1.19.13" {
		t.Errorf("cacheKey = %s", got)
	}
	p.toolchain = ""
	if got := cacheKey(p, version{version: "v2.6.3"}); got != "github.com_caddyserver_caddy_v2_cmd_caddy@v2.6.3" {
		t.Errorf("cacheKey = %s", got)
	}
	p.install = false
	if got := cacheKey(p, version{version: "v2.6.3"}); got != "github.com_caddyserver_caddy_v2_cmd_caddy@v2.6.3-src" {
		t.Errorf("cacheKey = %s", got)
	}
}

// TestSetups checks that each program's setup writes a configuration naming the ports it
// returns: a mismatch would start the program where nothing watches or loads it.
func TestSetups(t *testing.T) {
	for _, p := range catalogue() {
		t.Run(p.name, func(t *testing.T) {
			work := t.TempDir()
			l, err := p.setup(work)
			if err != nil {
				t.Fatal(err)
			}
			if l.close != nil {
				defer l.close()
			}
			if !strings.HasPrefix(l.pprof, "http://127.0.0.1:") || !strings.HasSuffix(l.pprof, "/debug/pprof/") || l.load == nil {
				t.Fatalf("launch %+v", l)
			}
			port := strings.TrimSuffix(strings.TrimPrefix(l.pprof, "http://127.0.0.1:"), "/debug/pprof/")
			var config strings.Builder
			config.WriteString(strings.Join(l.args, " "))
			entries, _ := os.ReadDir(work)
			for _, e := range entries {
				if b, err := os.ReadFile(filepath.Join(work, e.Name())); err == nil {
					config.Write(b)
				}
			}
			if !strings.Contains(config.String(), port) {
				t.Errorf("the pprof port %s is in neither the arguments nor the files:\n%s", port, config.String())
			}
		})
	}
}

// TestCaddyHTTPLoaderConfig checks that the config server serves the config Caddy starts with,
// with the polling on: an unchanged config is what keeps Caddy polling every second.
func TestCaddyHTTPLoaderConfig(t *testing.T) {
	work := t.TempDir()
	l, err := setupCaddyHTTPLoader(work)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	file, err := os.ReadFile(filepath.Join(work, "caddy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Admin struct {
			Config struct {
				Load      struct{ Module, URL string }
				LoadDelay string `json:"load_delay"`
			}
		}
	}
	if err := json.Unmarshal(file, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Admin.Config.Load.Module != "http" || cfg.Admin.Config.LoadDelay != "1s" {
		t.Fatalf("config %s", file)
	}
	resp, err := http.Get(cfg.Admin.Config.Load.URL)
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(served) != string(file) {
		t.Errorf("served %s\nstarted with %s", served, file)
	}
}

func TestStubAlertmanagerUI(t *testing.T) {
	src := t.TempDir()
	if err := stubAlertmanagerUI(src); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "ui", "app", "dist", "index.html")); err != nil {
		t.Error(err)
	}
}
