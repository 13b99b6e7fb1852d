package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	ctx := context.Background()
	a, err := Start(ctx, WithSampleInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	waitFor(t, "samples and profiles", func() bool { return a.ring.len() >= 5 && len(a.Profiles()) == 2 })
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("/debug/memdoctor/")
	if resp.StatusCode != 200 || resp.Header.Get("X-Memdoctor-Agent") != "1" {
		t.Fatalf("index: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{`"agent": "memdoctor"`, `"version": 1`, `"go_version": "go1.`, `"sample_interval_seconds": 0.1`, `"history_seconds": 3600`} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s:\n%s", want, body)
		}
	}

	resp, body = get("/debug/memdoctor/metrics")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || len(lines) < 5 || !strings.Contains(lines[0], `"source":"runtime/metrics"`) {
		t.Fatalf("metrics: %s, %d lines, first %s", resp.Header.Get("Content-Type"), len(lines), lines[0])
	}
	var third slot
	seq, _ := a.ring.firstAfter(time.Time{})
	a.ring.get(seq+2, &third)
	_, body = get("/debug/memdoctor/metrics?since=" + url.QueryEscape(third.t.Format(time.RFC3339Nano)))
	rest := strings.Split(strings.TrimSpace(body), "\n")
	if len(rest) < len(lines)-3 || strings.Contains(body, third.t.Format(time.RFC3339Nano)) {
		t.Errorf("since the third sample: %d lines of %d, or the third itself is included", len(rest), len(lines))
	}

	_, body = get("/debug/memdoctor/profiles")
	list := a.Profiles()
	if !strings.Contains(body, `"name": "`+list[0].Name+`"`) || !strings.Contains(body, `"label": ""`) {
		t.Errorf("profiles list:\n%s", body)
	}
	resp, body = get("/debug/memdoctor/profiles/" + list[0].Name)
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "\x1f\x8b") || len(body) != list[0].Size {
		t.Errorf("profile: %d, %d bytes (listed %d)", resp.StatusCode, len(body), list[0].Size)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/debug/memdoctor/events", 200, "[]"},
		{"/debug/memdoctor/traces", 200, "[]"},
		{"/debug/memdoctor/breakdown", 200, `"rss_bytes"`},
		{"/debug/memdoctor/stats", 200, `"gc_assist_cpu_fraction"`},
		{"/debug/memdoctor/profiles/heap-19700101T000000.000Z.pb.gz", 404, "rotated out"},
		{"/debug/memdoctor/profiles/../../etc/passwd", 404, ""},
		{"/debug/memdoctor/traces/x.trace", 404, "flight recorder is off"},
		{"/debug/memdoctor/metrics?since=yesterday", 400, "RFC 3339"},
		{"/debug/memdoctor/nope", 404, "unknown"},
	} {
		resp, body := get(tc.path)
		if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %s; want %d with %q", tc.path, resp.StatusCode, body, tc.code, tc.want)
		}
	}
	resp, err = http.Post(srv.URL+"/debug/memdoctor/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	_, err := Start(context.Background(), WithSampleInterval(time.Millisecond), WithProfileRounds(0), WithToken("short"))
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"WithSampleInterval(1ms)", "WithProfileRounds(0)", "WithToken"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestStopReleasesEverything(t *testing.T) {
	before := agentGoroutines()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := Start(ctx, WithSampleInterval(100*time.Millisecond), WithBudget(1<<40), WithPressureFunc(func(Pressure) {}))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a sample", func() bool { return a.ring.len() > 0 })
	cancel() // a done context stops the agent as Stop does
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(context.Background()); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	// Stop returns once they are told to end; the deadline only bounds a hung test.
	deadline := time.Now().Add(30 * time.Second)
	for left := agentGoroutines(); len(left) > len(before); left = agentGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines the agent started outlive Stop:\n%s", len(left)-len(before), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agentGoroutines returns the stacks of the live goroutines that the agent's code started
// (what goleak would find, with the standard library alone).
func agentGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "\ncreated by github.com/memdoctor/memdoctor/agent.") {
			out = append(out, g)
		}
	}
	return out
}
