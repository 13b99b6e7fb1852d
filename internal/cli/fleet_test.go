package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/diagnose"
)

func row(name string, rss uint64, fs ...diagnose.Finding) fleetRow {
	d := &diagnose.Diagnosis{Findings: fs}
	d.Summary.RSSPeakBytes = rss
	return fleetRow{name: name, d: d}
}

func finding(k diagnose.Kind, s diagnose.Severity, c diagnose.Confidence) diagnose.Finding {
	return diagnose.Finding{Kind: k, Severity: s, Confidence: c}
}

func TestRankFleetWorstFirst(t *testing.T) {
	rows := []fleetRow{
		row("clean-big", 9<<30),
		row("info", 1<<20, finding(diagnose.KindTransientSpike, diagnose.Info, diagnose.Confirmed)),
		row("suspected", 1<<20, finding(diagnose.KindHeapLeak, diagnose.Info, diagnose.Suspected)),
		row("warning-small", 1<<20, finding(diagnose.KindHeapLeak, diagnose.Warning, diagnose.Confirmed)),
		row("warning-two", 1<<20, finding(diagnose.KindHeapLeak, diagnose.Warning, diagnose.Confirmed), finding(diagnose.KindGCOverhead, diagnose.Info, diagnose.Confirmed)),
		row("warning-big", 8<<30, finding(diagnose.KindGoroutineLeak, diagnose.Warning, diagnose.Confirmed)),
		row("critical", 1<<20, finding(diagnose.KindHeapLeak, diagnose.Critical, diagnose.Confirmed)),
		row("clean-small", 1<<20),
	}
	rankFleet(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.name)
	}
	want := "critical warning-two warning-big warning-small info suspected clean-big clean-small"
	if strings.Join(got, " ") != want {
		t.Errorf("ranked %v, want %s", got, want)
	}
}

func TestFleetFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
		code int
	}{
		{nil, nil, "--prometheus URL is required", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "extra"}, nil, "unexpected argument", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--fail-on", "info"}, nil, "want warning or critical", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--window", "0s"}, nil, "--window", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--step", "100ms"}, nil, "--step", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--end", "yesterday"}, nil, "--end", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--selector", `up{job="a"}`}, nil, "--selector", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--basic-auth", "nocolon"}, nil, "USER:PASSWORD", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--bearer-token", "t", "--basic-auth", "u:p"}, nil, "not both", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--basic-auth", "u:p"}, map[string]string{"MEMDOCTOR_PROMETHEUS_TOKEN": "t"}, "", 0},
		{[]string{"--prometheus", "http://p:9090", "--header", "no colon"}, nil, "NAME: VALUE", exitUsage},
		{[]string{"--prometheus", "http://p:9090", "--bearer-token-file", "/nonexistent/token"}, nil, "--bearer-token-file", exitFailure},
	} {
		var f fleetFlags
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(k string) string { return tc.env[k] }}
		_, err := parseFleet(e, &f, tc.args)
		if err == nil && tc.code == 0 {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != tc.code {
			t.Errorf("%v: %v (exit %d), want %q and exit %d", tc.args, err, exitCode(err), tc.want, tc.code)
		}
	}
}

// TestFleetJSON runs the command against a minimal Prometheus API with two targets, one
// whose instance is not an address, and checks the JSON's shape.
func TestFleetJSON(t *testing.T) {
	targets := []map[string]string{
		{"job": "api", "instance": "10.0.0.1:8080"},
		{"job": "api", "instance": "api-7d9f"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		q := r.Form.Get("query")
		var result []map[string]any
		kind := "matrix"
		for _, l := range targets {
			switch {
			case strings.HasPrefix(q, "count_over_time("):
				kind = "vector"
				result = append(result, map[string]any{"metric": l, "value": []any{1e9, "240"}})
			case r.URL.Path == "/api/v1/query_range":
				var vs []any
				for i := range 61 {
					vs = append(vs, []any{1e9 + 15*float64(i), "1000"})
				}
				result = append(result, map[string]any{"metric": l, "values": vs})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": kind, "result": result}})
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "fleet.json")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"fleet", "--prometheus", srv.URL, "--end", fmt.Sprint(1e9 + 900), "--window", "15m", "--step", "15s", "--json", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "memdoctor/fleet/v1" {
		t.Errorf("schema %v", doc["schema"])
	}
	w := doc["window"].(map[string]any)
	if w["seconds"] != 900.0 || w["step_seconds"] != 15.0 || w["step_source"] != "flag" {
		t.Errorf("window %v", w)
	}
	ts := doc["targets"].([]any)
	if len(ts) != 2 {
		t.Fatalf("%d targets", len(ts))
	}
	for _, x := range ts {
		tg := x.(map[string]any)
		labels := tg["labels"].(map[string]any)
		if labels["job"] != "api" || tg["findings"] == nil || tg["not_judged"] == nil {
			t.Errorf("target %v", tg)
		}
		if labels["instance"] == "api-7d9f" && !strings.Contains(fmt.Sprint(tg["watch_note"]), "not a host:port") {
			t.Errorf("instance api-7d9f: no note that it is not an address: %v", tg)
		}
	}
	if !strings.Contains(stdout.String(), "RANK") || !strings.Contains(stdout.String(), "api/10.0.0.1:8080") {
		t.Errorf("no table:\n%s", stdout.String())
	}
}
