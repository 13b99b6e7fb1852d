//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
)

// gorillaRequests is how many requests the test sends: each leaves its request, session
// registry and session in gorilla/context's map.
const gorillaRequests = 2000

// TestHoldersGorillaSessions reads the holders of a real leak in real libraries: a web server
// on github.com/gorilla/sessions v1.1.3 and github.com/gorilla/context v1.1.1, built through
// the module proxy (testdata/gorilla-sessions), whose handler calls store.Get per request and
// never context.Clear. The truth, from the libraries' source: sessions.GetRegistry stores each
// request's *Registry with context.Set(r, registryKey, ...), which keeps it in context's
// package variable data (map[*http.Request]map[interface{}]interface{}) under the request,
// and the request under datat too, until context.Clear(r): nothing else holds them once the
// request is served. memdoctor holders on the live server must name that map as the root of
// the registries, the sessions and the requests, and leave the server running. (The sites
// are frames of the allocation stacks in Go 1.26 and 1.27 alike: 1.27's net/http parses a
// request in readRequestLimit, 1.26's in readRequest, both called by (*conn).readRequest.)
func TestHoldersGorillaSessions(t *testing.T) {
	srv, addr, logs := startTestdataServer(t, "gorilla-sessions", "github.com/gorilla/sessions v1.1.3")
	url := "http://" + addr + "/"
	client := &http.Client{Timeout: 10 * time.Second}
	get := func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "visit 1") {
			return fmt.Errorf("GET %s: %s %q", url, resp.Status, body)
		}
		return nil
	}
	for i := 0; i < gorillaRequests; i++ {
		if err := get(); err != nil {
			t.Fatalf("request %d: %v\n%s", i, err, logs.String())
		}
	}

	sites := []string{
		"github.com/gorilla/sessions.GetRegistry", // the *Registry, its sessions map, context.Set's own maps
		"github.com/gorilla/sessions.NewSession",  // the *Session and its Values
		"net/http.(*conn).readRequest",            // the *http.Request (context.data's key), its header, URL, context
	}
	// Enough paths that the fragmented ones (a request's header, URL, ... each its own path,
	// through data or datat) cover most of the bytes.
	args := []string{"holders", "--json", "-", "--paths", "30"}
	for _, s := range sites {
		args = append(args, "--site", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := memdoctor(t, ctx, append(args, fmt.Sprint(srv.Process.Pid))...)
	t.Logf("memdoctor %s\n%s", strings.Join(args, " "), r.stderr)
	if r.code != 0 {
		t.Fatalf("memdoctor holders: exit %d\n%s", r.code, r.stderr)
	}
	var res holders.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("holders JSON: %v\n%s", err, r.stdout)
	}
	if res.Target.Kind != "process" || res.Stopped <= 0 {
		t.Errorf("target %+v stopped %.1f ms; want the live process, stopped a while", res.Target, res.Stopped)
	}
	if len(res.Culprits) != len(sites) {
		t.Fatalf("%d culprits; want %d, one per --site", len(res.Culprits), len(sites))
	}
	for _, c := range res.Culprits {
		reachable := c.Bytes - c.GarbageBytes
		if c.Samples-c.GarbageSamples < 10 || reachable <= 0 {
			t.Errorf("%s: %d sampled objects, %d of them garbage; want at least 10 reachable after %d requests", c.Site, c.Samples, c.GarbageSamples, gorillaRequests)
			continue
		}
		var held float64
		for _, p := range c.Paths {
			if p.Root.Kind == "global" && (p.Root.Name == "github.com/gorilla/context.data" || p.Root.Name == "github.com/gorilla/context.datat") {
				held += p.Bytes
			}
		}
		if len(c.Paths) == 0 || !strings.HasPrefix(c.Paths[0].Expr, "github.com/gorilla/context.data") || held < 0.8*reachable {
			top := ""
			if len(c.Paths) > 0 {
				top = c.Paths[0].Expr
			}
			t.Errorf("%s: the top path is %q, and gorilla/context's maps hold %.0f%% of the reachable sampled bytes; "+
				"want github.com/gorilla/context.data (context.Set keeps every request's values there until context.Clear), at least 80%%",
				c.Site, top, 100*held/reachable)
		}
	}
	// The server runs again, and serves.
	if err := get(); err != nil {
		t.Errorf("after memdoctor holders: %v", err)
	}
}

// startTestdataServer builds the program of testdata/DIR, a module of its own built through the
// module proxy (what names the library it is built on), starts it and returns it with the
// address it prints first; its stderr goes to logs. The test's end kills it.
func startTestdataServer(t *testing.T, dir, what string) (srv *exec.Cmd, addr string, logs *bytes.Buffer) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), dir)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", dir)
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/%s (%s through the module proxy): %v\n%s", dir, what, err, out)
	}
	srv = exec.Command(bin)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs = &bytes.Buffer{}
	srv.Stderr = logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("testdata/%s printed no address: %v\n%s", dir, err, logs.String())
	}
	return srv, strings.TrimSpace(line), logs
}
