package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

// fixture is a real session of the lab's json-whole scenario (report's test fixture).
const fixture = "../../report/testdata/session-json-whole"

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testEnv(stdout, stderr io.Writer, vars map[string]string) *env {
	return &env{stdout: stdout, stderr: stderr, log: slog.New(slog.DiscardHandler), getenv: func(k string) string { return vars[k] }}
}

func TestReportHTMLFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	var stdout, stderr bytes.Buffer
	if err := runReport(context.Background(), testEnv(&stdout, &stderr, nil), []string{fixture, "--html", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte(`id="memdoctor-data"`)) {
		t.Errorf("%s is not the HTML report", out)
	}
	if !strings.Contains(stderr.String(), "HTML report written to "+out) || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	// No temporary file is left beside it.
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".r.html*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func TestReportUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"--html", "-", "--json", "-", fixture},
	} {
		err := runReport(context.Background(), testEnv(io.Discard, io.Discard, nil), args)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("report %q: %v, want a usage error", args, err)
		}
	}
	err := runReport(context.Background(), testEnv(io.Discard, io.Discard, nil), []string{"--html", "x.html", "/nonexistent/session"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/session") {
		t.Errorf("a missing session: %v, want an error naming it", err)
	}
}

func TestServeRefusesNetworkWithoutToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "10.1.2.3:8089", "example.com:80"} {
		err := runServe(context.Background(), testEnv(io.Discard, io.Discard, nil), []string{"--addr", addr, fixture})
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--token") {
			t.Errorf("--addr %s without a token: %v, want a usage error asking for --token", addr, err)
		}
	}
}

// TestServeTokenRule: serve applies the agent's token rule (wire.CheckToken) to any token,
// on loopback or not, from the flag or the environment: one rule for both.
func TestServeTokenRule(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // a serve that got past the checks stops at once
	for _, tok := range []string{"x", "short-token", "0123456789abcde", "has a space 0123456789", "tab\t0123456789abcdef"} {
		for _, c := range []struct {
			args []string
			env  map[string]string
		}{
			{[]string{"--addr", "0.0.0.0:0", "--token", tok, fixture}, nil},
			{[]string{"--token", tok, fixture}, nil},
			{[]string{"--addr", "10.1.2.3:8089", fixture}, map[string]string{"MEMDOCTOR_TOKEN": tok}},
		} {
			err := runServe(done, testEnv(io.Discard, io.Discard, c.env), c.args)
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "token") {
				t.Errorf("serve %q (env %v): %v, want a usage error about the token", c.args, c.env, err)
			}
		}
		if _, err := agent.Start(context.Background(), agent.WithToken(tok)); err == nil {
			t.Errorf("the agent accepts %q, serve refuses it", tok)
		}
	}
}

// TestServeEndToEnd starts memdoctor serve on loopback with a token from the environment,
// opens the printed URL, and stops it as Ctrl-C would.
func TestServeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, testEnv(&stdout, io.Discard, map[string]string{"MEMDOCTOR_TOKEN": "t0ken-0123456789abcdef"}), []string{fixture})
	}()
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		url, _, _ = strings.Cut(stdout.String(), "\n")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/?token=t0ken-0123456789abcdef") {
		t.Fatalf("printed URL %q, want http://127.0.0.1:PORT/?token=t0ken-0123456789abcdef", url)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(page, []byte(`id="picker"`)) {
		t.Errorf("GET %s: %d, want the served report", url, res.StatusCode)
	}
	bare, _, _ := strings.Cut(url, "?")
	res, err = http.Get(bare + "pprof/snap/0/top")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without the token: %d, want 401", res.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestLocalZoneName(t *testing.T) {
	for tz, want := range map[string]string{
		"Europe/Paris":                         "Europe/Paris",
		":America/New_York":                    "America/New_York",
		"/usr/share/zoneinfo/Asia/Tokyo":       "Asia/Tokyo",
		":/usr/share/zoneinfo/Australia/Perth": "Australia/Perth",
	} {
		if got := localZoneName(func(string) string { return tz }); got != want {
			t.Errorf("TZ=%s: %q, want %q", tz, got, want)
		}
	}
}
