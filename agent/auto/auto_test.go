package auto

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestImportStartsTheAgent: this test binary imports the package, so init ran with the
// test's environment (no MEMDOCTOR_ variables): the agent runs and DefaultServeMux serves it.
func TestImportStartsTheAgent(t *testing.T) {
	if Agent() == nil || Err() != nil {
		t.Fatalf("agent %v, err %v", Agent(), Err())
	}
	srv := httptest.NewServer(http.DefaultServeMux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/memdoctor/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"agent": "memdoctor"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		off     bool
		opts    int
		addr    string
		wantErr string
	}{
		{map[string]string{}, false, 0, "", ""},
		{map[string]string{"MEMDOCTOR_AGENT": "off"}, true, 0, "", ""},
		{map[string]string{"MEMDOCTOR_AGENT": "FALSE", "MEMDOCTOR_BUDGET": "nonsense"}, true, 0, "", ""},
		{map[string]string{"MEMDOCTOR_AGENT_ADDR": ":6061", "MEMDOCTOR_AGENT_TOKEN": "0123456789abcdef0", "MEMDOCTOR_MEMLIMIT_RATIO": "0.9",
			"MEMDOCTOR_BUDGET": "2GiB", "MEMDOCTOR_FLIGHT_RECORDER": "on", "MEMDOCTOR_EXIT_DIR": "/tmp/x", "MEMDOCTOR_EXIT_HOLD": "30s", "MEMDOCTOR_AGENT_LOG": "warn"}, false, 6, ":6061", ""},
		{map[string]string{"MEMDOCTOR_MEMLIMIT_RATIO": "1.5"}, false, 0, "", "MEMDOCTOR_MEMLIMIT_RATIO"},
		{map[string]string{"MEMDOCTOR_BUDGET": "lots"}, false, 0, "", "MEMDOCTOR_BUDGET"},
		{map[string]string{"MEMDOCTOR_FLIGHT_RECORDER": "maybe"}, false, 0, "", "MEMDOCTOR_FLIGHT_RECORDER"},
		{map[string]string{"MEMDOCTOR_EXIT_DIR": "/x", "MEMDOCTOR_EXIT_HOLD": "soon"}, false, 0, "", "MEMDOCTOR_EXIT_HOLD"},
		{map[string]string{"MEMDOCTOR_AGENT_LOG": "loud"}, false, 0, "", "MEMDOCTOR_AGENT_LOG"},
	} {
		cfg, err := parseEnv(env(tc.env))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want one naming %s", tc.env, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case cfg.off != tc.off || len(cfg.opts) != tc.opts || cfg.addr != tc.addr:
			t.Errorf("%v: off %v, %d options, addr %q; want %v, %d, %q", tc.env, cfg.off, len(cfg.opts), cfg.addr, tc.off, tc.opts, tc.addr)
		}
	}
}

func TestStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mux := http.NewServeMux()
	a, err := start(ctx, env(map[string]string{"MEMDOCTOR_AGENT_TOKEN": "0123456789abcdef0"}), mux)
	if err != nil || a == nil {
		t.Fatalf("%v, %v", a, err)
	}
	defer a.Stop(context.Background())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/memdoctor/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	// Registering twice (the program did it too) is an error, not a panic.
	if _, err := start(ctx, env(nil), mux); err == nil || !strings.Contains(err.Error(), "registering") {
		t.Errorf("second registration: %v", err)
	}
	// The options reach the agent.
	b, err := start(ctx, env(map[string]string{"MEMDOCTOR_BUDGET": "3GiB", "MEMDOCTOR_FLIGHT_RECORDER": "1"}), http.NewServeMux())
	if err != nil {
		t.Fatal(err)
	}
	in := b.Info()
	b.Stop(context.Background())
	if in.BudgetBytes != 3<<30 || in.BudgetSource != "option" || !in.FlightRecorder {
		t.Errorf("budget %d from %q, flight recorder %v", in.BudgetBytes, in.BudgetSource, in.FlightRecorder)
	}
	// A budget as Kubernetes writes a pod's memory limit (resourceFieldRef gives bytes; people write 1536Mi).
	k, err := start(ctx, env(map[string]string{"MEMDOCTOR_BUDGET": "1536Mi"}), http.NewServeMux())
	if err != nil {
		t.Fatal(err)
	}
	in = k.Info()
	k.Stop(context.Background())
	if in.BudgetBytes != 1536<<20 {
		t.Errorf("MEMDOCTOR_BUDGET=1536Mi: budget %d", in.BudgetBytes)
	}
	if a, err := start(ctx, env(map[string]string{"MEMDOCTOR_AGENT": "off"}), mux); a != nil || err != nil {
		t.Errorf("off: %v, %v", a, err)
	}
	if _, err := start(ctx, env(map[string]string{"MEMDOCTOR_AGENT_TOKEN": "short"}), mux); err == nil {
		t.Error("a short token was accepted")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"2GiB": 2 << 30, "512MiB": 512 << 20, "64kib": 64 << 10, "1.5GB": 1.5e9, "100MB": 100e6, "1048576": 1 << 20, " 3 GiB ": 3 << 30, "10B": 10,
		// As Kubernetes writes a pod's memory limit.
		"512Mi": 512 << 20, "1.5Gi": 1.5 * (1 << 30), "512M": 512e6, "1G": 1e9} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "0", ".1", "NaN", "Inf", "1e30GiB", "two", "512m"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2GiB", "1.5GB", "512", "0.5KiB", "-1", "1e400", "GiB", " 3 mib "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && (n == 0 || n >= 1<<63) {
			t.Fatalf("ParseSize(%q) = %d without an error", s, n)
		}
	})
}
