package agent

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/goleak"
)

var spikeHeld [][]byte

var churnSink []byte

// churn makes garbage until stop is closed, as a service goes on serving after a spike: the
// GCs it causes are what publish the spike's allocations in heap profiles (and show the
// agent that the rise has stopped).
func churn(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		for range 64 {
			churnSink = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}

// spikeAlloc holds 96 MiB for a moment, then lets go: a transient spike. Its 4 MiB blocks
// are each all but certain to be sampled by the heap profiler (1 - e^-8), so the profiles
// count them exactly.
//
//go:noinline
func spikeAlloc() {
	for range 24 {
		b := make([]byte, 4<<20)
		b[0] = 1
		spikeHeld = append(spikeHeld, b)
		time.Sleep(5 * time.Millisecond)
	}
	spikeHeld = nil
}

// TestSpikeCapture runs the agent in this process through a real spike: the heap-jump
// trigger fires, the pair brackets the whole spike (alloc_space, cumulative, grows by all of
// spikeAlloc's 96 MiB from "before" to "after": a "before" taken during the spike would
// miss some), and the flight recorder's snapshot is kept.
// Then Stop releases every goroutine the agent started.
func TestSpikeCapture(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	a, err := Start(ctx,
		WithSampleInterval(100*time.Millisecond),
		WithProfileInterval(time.Hour), // only the round taken at Start
		WithFlightRecorder(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first profile round", func() bool { return len(a.Profiles()) == 2 })
	spikeAlloc()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { churn(stop); close(done) }()
	waitFor(t, "the after profiles", func() bool {
		evs := a.Events()
		return len(evs) > 0 && evs[0].After != "" && evs[0].Trace != ""
	})
	close(stop)
	<-done
	ev := a.Events()[0]
	if ev.Trigger != TriggerHeapJump || ev.Before == "" || ev.BeforeGoroutine == "" || ev.AfterGoroutine == "" {
		t.Fatalf("event %+v", ev)
	}
	before := allocBytes(t, a, ev.Before, "spikeAlloc")
	after := allocBytes(t, a, ev.After, "spikeAlloc")
	// A periodic snapshot may land in the spike's first 5 ms on a loaded machine, after one of
	// its 24 allocations: the pair still brackets all the others.
	if d := after - before; d < 91<<20 || d > 97<<20 {
		t.Errorf("spikeAlloc allocated %.1f MiB between before and after; it allocated 96 MiB (4 MiB at a time)", float64(d)/(1<<20))
	}
	var tr bytes.Buffer
	if found, err := a.flight.writeTo(ev.Trace, &tr); !found || err != nil || !bytes.HasPrefix(tr.Bytes(), []byte("go 1.")) {
		t.Errorf("trace %s: found %v, err %v, %d bytes starting %q", ev.Trace, found, err, tr.Len(), tr.Bytes()[:min(tr.Len(), 16)])
	}

	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.Profiles()) == 0 || len(a.Events()) == 0 {
		t.Error("Stop dropped what was captured")
	}
}

// allocBytes returns the alloc_space of the samples of a profile whose stack has fn.
func allocBytes(t *testing.T, a *Agent, name, fn string) int64 {
	t.Helper()
	var buf bytes.Buffer
	if found, err := a.store.writeTo(name, &buf); !found || err != nil {
		t.Fatalf("profile %s: found %v, err %v", name, found, err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("profile %s: %v", name, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "alloc_space" {
			idx = i
		}
	}
	var sum int64
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			found := false
			for _, l := range loc.Line {
				if l.Function != nil && strings.HasSuffix(l.Function.Name, "."+fn) {
					found = true
				}
			}
			if found {
				sum += s.Value[idx]
				break
			}
		}
	}
	return sum
}

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
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
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
}
