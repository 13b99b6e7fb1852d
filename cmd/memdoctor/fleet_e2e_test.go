package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
)

// prometheusEnv names the Prometheus server binary the fleet test runs; .ci/run installs
// Debian's (2.42; it passes against a build of v0.310.0, Prometheus 3.10, too) and sets it.
const prometheusEnv = "MEMDOCTOR_PROMETHEUS"

// fleetDoc is memdoctor fleet's JSON (memdoctor/fleet/v1), as a reader would decode it.
type fleetDoc struct {
	Schema string `json:"schema"`
	Window struct {
		Start, End  time.Time
		Seconds     float64 `json:"seconds"`
		StepSeconds float64 `json:"step_seconds"`
		StepSource  string  `json:"step_source"`
	} `json:"window"`
	Targets []struct {
		Rank      int                  `json:"rank"`
		Name      string               `json:"name"`
		Labels    map[string]string    `json:"labels"`
		Severity  diagnose.Severity    `json:"severity"`
		Watch     string               `json:"watch"`
		WatchNote string               `json:"watch_note"`
		Findings  []diagnose.Finding   `json:"findings"`
		NotJudged []diagnose.NotJudged `json:"not_judged"`
	} `json:"targets"`
}

// TestFleetEndToEnd runs a real Prometheus scraping real services every second (a heap
// leak, a goroutine leak, GC pressure, a healthy one, and the healthy one again under a job
// whose instance label is a pod name), waits for a minute of readings, and checks every
// verdict of memdoctor fleet: the problems found at warning with the right kind and rate,
// none on the healthy service, the ranking worst first, and the watch command to run next.
func TestFleetEndToEnd(t *testing.T) {
	defer parallel(t)() // waits more than it computes: it runs beside the other waiting tests
	promBin := os.Getenv(prometheusEnv)
	if promBin == "" {
		t.Skipf("%s is not set: .ci/run installs Debian's prometheus and sets it to the binary", prometheusEnv)
	}
	dir := t.TempDir()
	svcBin := filepath.Join(dir, "fleet-service")
	if out, err := exec.Command("go", "build", "-o", svcBin, "./testdata/fleet-service").CombinedOutput(); err != nil {
		t.Fatalf("go build fleet-service: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	modes := []string{"heap-leak", "goroutine-leak", "gc-pressure", "healthy"}
	addr := map[string]string{}
	for _, m := range modes {
		_, u := startService(t, ctx, svcBin, "-mode", m)
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		addr[m] = p.Host
	}
	promURL := startPrometheus(t, ctx, promBin, dir, addr)
	waitForReadings(t, ctx, promURL, len(modes)+1, 50)

	out := filepath.Join(dir, "fleet.json")
	res := memdoctor(t, ctx, "fleet", "--prometheus", promURL, "--selector", `job=~"fleet|pods"`, "--window", "2m", "--json", out)
	if res.code != 0 {
		t.Fatalf("memdoctor fleet: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("memdoctor fleet:\n%s", res.stdout)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc fleetDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("fleet JSON: %v", err)
	}
	if doc.Schema != "memdoctor/fleet/v1" || doc.Window.Seconds != 120 || doc.Window.StepSeconds != 1 || doc.Window.StepSource != "scrape interval" {
		t.Errorf("schema %q, window %+v: want memdoctor/fleet/v1 over 120 s, a reading every 1 s (the scrape interval)", doc.Schema, doc.Window)
	}
	if len(doc.Targets) != len(modes)+1 {
		t.Fatalf("%d targets, want %d", len(doc.Targets), len(modes)+1)
	}

	// The verdict on each service.
	want := map[string]struct {
		kind     diagnose.Kind
		evidence string
		lo, hi   float64
	}{
		// 128 KiB kept every 100 ms: 75 MiB/min.
		"heap-leak": {diagnose.KindHeapLeak, "growth_bytes_per_minute", 50 << 20, 100 << 20},
		// 10 goroutines blocked for good every second: 600/min.
		"goroutine-leak": {diagnose.KindGoroutineLeak, "growth_goroutines_per_minute", 400, 800},
		"gc-pressure":    {diagnose.KindGCOverhead, "gc_cpu_fraction", 0.10, 1},
	}
	lastFlagged, firstClean := 0, len(doc.Targets)+1
	for i, tg := range doc.Targets {
		if tg.Rank != i+1 {
			t.Errorf("target %d has rank %d", i, tg.Rank)
		}
		if i > 0 && tg.Severity.Rank() > doc.Targets[i-1].Severity.Rank() {
			t.Errorf("rank %d (%s) is more severe than rank %d (%s): not worst first", tg.Rank, tg.Severity, i, doc.Targets[i-1].Severity)
		}
		mode := tg.Labels["mode"]
		if !hasNotJudged(tg.NotJudged, diagnose.KindNonGoMemory, "anonymous") || !hasNotJudged(tg.NotJudged, diagnose.KindAllocationHotspot, "profiles") {
			t.Errorf("%s: what Prometheus cannot show is not said: %+v", mode, tg.NotJudged)
		}
		if mode == "healthy" {
			firstClean = min(firstClean, tg.Rank)
			for _, f := range tg.Findings {
				if f.Severity.Rank() >= diagnose.Warning.Rank() {
					t.Errorf("healthy service (%s): %s %s: %s", tg.Name, f.Severity, f.Kind, f.Title)
				}
			}
			if tg.Labels["job"] == "pods" {
				if tg.Watch != "" || !strings.Contains(tg.WatchNote, "not a host:port") {
					t.Errorf("instance %q: watch %q, note %q; want no command and a note", tg.Labels["instance"], tg.Watch, tg.WatchNote)
				}
			}
			continue
		}
		lastFlagged = max(lastFlagged, tg.Rank)
		w, ok := want[mode]
		if !ok {
			t.Errorf("unexpected target %s %v", tg.Name, tg.Labels)
			continue
		}
		f := fleetFinding(tg.Findings, w.kind)
		if f == nil || f.Severity != diagnose.Warning || f.Confidence != diagnose.Confirmed {
			t.Errorf("%s: no confirmed %s warning: %+v", mode, w.kind, tg.Findings)
			continue
		}
		if v := f.Evidence[w.evidence]; v < w.lo || v > w.hi {
			t.Errorf("%s: %s = %.4g, want %.4g..%.4g", mode, w.evidence, v, w.lo, w.hi)
		}
		if wantCmd := "memdoctor watch --until-confirmed --duration 15m http://" + addr[mode]; tg.Watch != wantCmd {
			t.Errorf("%s: watch %q, want %q", mode, tg.Watch, wantCmd)
		}
		if !strings.Contains(res.stdout, "next: memdoctor watch --until-confirmed --duration 15m http://"+addr[mode]) {
			t.Errorf("%s: the table does not give the watch command", mode)
		}
		// The leaks are not mistaken for each other.
		if mode == "heap-leak" && fleetFinding(tg.Findings, diagnose.KindGoroutineLeak) != nil ||
			mode == "goroutine-leak" && fleetFinding(tg.Findings, diagnose.KindHeapLeak) != nil && fleetFinding(tg.Findings, diagnose.KindHeapLeak).Severity != diagnose.Info {
			t.Errorf("%s: %+v", mode, tg.Findings)
		}
	}
	if lastFlagged >= firstClean {
		t.Errorf("a healthy service (rank %d) is ranked above a flagged one (rank %d)", firstClean, lastFlagged)
	}

	// --fail-on warning: exit status 3.
	if res := memdoctor(t, ctx, "fleet", "--prometheus", promURL, "--selector", `job="fleet"`, "--window", "2m", "--fail-on", "warning"); res.code != 3 {
		t.Errorf("--fail-on warning: exit %d, want 3\n%s", res.code, res.stderr)
	}
}

func fleetFinding(fs []diagnose.Finding, k diagnose.Kind) *diagnose.Finding {
	for i := range fs {
		if fs[i].Kind == k {
			return &fs[i]
		}
	}
	return nil
}

func hasNotJudged(nj []diagnose.NotJudged, k diagnose.Kind, reason string) bool {
	for _, n := range nj {
		if n.Kind == k && strings.Contains(n.Reason, reason) {
			return true
		}
	}
	return false
}

// startPrometheus writes a configuration that scrapes the services every second (each
// labelled with its mode; the healthy one a second time under job "pods" with its instance
// relabelled to a pod name) and starts Prometheus on loopback. It returns its URL once ready.
func startPrometheus(t *testing.T, ctx context.Context, bin, dir string, addr map[string]string) string {
	t.Helper()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fleet\n    static_configs:\n")
	for mode, a := range addr {
		fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {mode: %q}\n", a, mode)
	}
	fmt.Fprintf(&cfg, "  - job_name: pods\n    static_configs:\n      - targets: [%q]\n        labels: {mode: healthy}\n", addr["healthy"])
	cfg.WriteString("    relabel_configs:\n      - target_label: instance\n        replacement: healthy-7d9f-abc\n")
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+listen)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus.log:\n%s", lastLines(string(b), 30))
		}
	})
	u := "http://" + listen
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(u + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return u
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("Prometheus at %s not ready after a minute", u)
		}
	}
}

// waitForReadings waits until Prometheus holds at least n readings of go_goroutines for
// each of the want targets.
func waitForReadings(t *testing.T, ctx context.Context, promURL string, want, n int) {
	t.Helper()
	q := promURL + "/api/v1/query?query=" + url.QueryEscape("count_over_time(go_goroutines[5m])")
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(2 * time.Second) {
		var body struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		least := -1
		if resp, err := http.Get(q); err == nil {
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if len(body.Data.Result) == want {
				least = n
				for _, r := range body.Data.Result {
					s, _ := r.Value[1].(string)
					c, _ := strconv.Atoi(s)
					least = min(least, c)
				}
			}
		}
		if least >= n {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("Prometheus did not collect %d readings of %d targets in 3 minutes (last: %d targets)", n, want, len(body.Data.Result))
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
