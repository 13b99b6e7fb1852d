//go:build !nopprof

package lab

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}

func TestScenarioEmbedsAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario")
	}
	for _, tc := range []struct {
		env   string
		serve bool
	}{{"1", true}, {"true", true}, {"0", false}, {"", false}} {
		t.Run("MEMDOCTOR_LAB_AGENT="+tc.env, func(t *testing.T) {
			t.Setenv(AgentEnv, tc.env)
			http.DefaultClient.CloseIdleConnections()
			r := startScenario(t, "healthy")
			base := strings.TrimSuffix(r.url, "/debug/pprof/")
			code, body := get(t, base+"/debug/memdoctor/")
			if !tc.serve {
				if code != http.StatusNotFound {
					t.Errorf("GET /debug/memdoctor/ without the agent: %d %s", code, body)
				}
			} else {
				var info struct {
					Agent   string  `json:"agent"`
					Version int     `json:"version"`
					PID     int     `json:"pid"`
					Profile float64 `json:"profile_interval_seconds"`
				}
				if err := json.Unmarshal(body, &info); code != http.StatusOK || err != nil {
					t.Fatalf("GET /debug/memdoctor/: %d %v: %s", code, err, body)
				}
				if info.Agent != "memdoctor" || info.Version != 1 || info.PID == 0 || info.Profile != labAgentProfileInterval.Seconds() {
					t.Errorf("agent info %+v from %s", info, body)
				}
				// It samples from the start: its metrics already hold a line.
				var lines int
				for deadline := time.Now().Add(10 * time.Second); lines == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					code, body = get(t, base+"/debug/memdoctor/metrics")
					lines = strings.Count(string(body), "\n")
				}
				if code != http.StatusOK || lines == 0 || !strings.Contains(string(body), `"runtime/metrics"`) {
					t.Errorf("GET /debug/memdoctor/metrics: %d, %d lines: %.300s", code, lines, body)
				}
			}
			http.DefaultClient.CloseIdleConnections()
			r.stop()
			r.checkNoGoroutinesLeft()
		})
	}
}

func TestScenarioRefusesBadAgentEnv(t *testing.T) {
	t.Setenv(AgentEnv, "yes please")
	s, _ := Lookup("healthy")
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // in case it serves
	defer cancel()
	err := s.Run(ctx, Env{Stdout: &out})
	if err == nil || !strings.Contains(err.Error(), AgentEnv) {
		t.Errorf("Run with %s=%q: %v, want an error naming the variable", AgentEnv, "yes please", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}
