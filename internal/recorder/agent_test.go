package recorder

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent"
	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/session"
)

var held [][]byte
var garbage []byte

// spike holds 64 MiB for a moment, then makes garbage until the agent has the "after" pair
// of the heap-jump it causes (the GCs the garbage causes publish the spike in heap profiles).
func spike(t *testing.T, a *agent.Agent) {
	t.Helper()
	for range 16 {
		held = append(held, make([]byte, 4<<20))
		time.Sleep(5 * time.Millisecond)
	}
	held = nil
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := a.Events()
		if len(evs) > 0 && evs[0].After != "" && (evs[0].Trace != "" || !a.Info().FlightRecorder) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete event from the agent: %+v", evs)
		}
		for range 64 {
			garbage = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}

func startAgent(t *testing.T, opts ...agent.Option) *agent.Agent {
	t.Helper()
	a, err := agent.Start(context.Background(), append([]agent.Option{
		agent.WithSampleInterval(100 * time.Millisecond),
		agent.WithProfileInterval(time.Hour),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	deadline := time.Now().Add(30 * time.Second)
	for len(a.Profiles()) < 2 || a.Info().Samples < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the agent took nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return a
}

func watchConfig(t *testing.T) Config {
	return Config{Mode: "watch", Out: filepath.Join(t.TempDir(), "s"), Duration: 1500 * time.Millisecond, Sample: 200 * time.Millisecond, Interval: time.Second}
}

// TestWatchAgentOnly watches a service that serves only the agent: the session gets the
// agent's history from before the watch, its labelled pair and its trace, and memdoctor does
// not read /proc itself since the agent's samples carry it.
func TestWatchAgentOnly(t *testing.T) {
	a := startAgent(t, agent.WithFlightRecorder(0, 0))
	spike(t, a)
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", a.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cfg := watchConfig(t)
	res, err := Watch(context.Background(), cfg, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusComplete {
		t.Errorf("status %s: %s", res.Status, res.Detail)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Manifest
	if m.Target.AgentURL != srv.URL+"/debug/memdoctor/" || m.Target.PprofURL != "" || m.Target.GoVersionSource != "agent" || m.Target.PID != os.Getpid() {
		t.Errorf("target %+v", m.Target)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "no net/http/pprof") || !strings.Contains(strings.Join(m.Notes, "\n"), "before memdoctor attached") {
		t.Errorf("notes %q", m.Notes)
	}
	before, bare := 0, 0
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	sched := 0
	for _, smp := range samples {
		if smp.Sched != nil && smp.Go == nil && smp.Proc == nil {
			sched++ // memdoctor's own: how long the service's threads waited for a CPU
			continue
		}
		if smp.Go == nil || smp.Go.Source != "runtime/metrics" {
			t.Fatalf("a sample not from the agent: %+v", smp)
		}
		if smp.Proc == nil {
			bare++
		}
		if smp.Time.Before(m.Start) {
			before++
		}
	}
	if before < 3 || bare > 0 {
		t.Errorf("%d samples from before the watch (want the agent's history), %d without /proc", before, bare)
	}
	if _, err := os.Stat("/proc/self/task"); err == nil && sched == 0 {
		t.Errorf("no scheduler statistics of the local service beside the agent's samples")
	}
	seen := map[string]int{}
	for _, p := range s.Profiles {
		seen[p.Kind+"/"+p.Label]++
	}
	for _, want := range []string{"heap/before-heap-jump", "heap/after-heap-jump", "goroutine/before-heap-jump", "goroutine/after-heap-jump", "heap/"} {
		if seen[want] != 1 {
			t.Errorf("profiles %v: want one %s", seen, want)
		}
	}
	ev := a.Events()[0]
	for _, name := range []string{ev.Before, ev.After} {
		if _, err := os.Stat(filepath.Join(cfg.Out, session.ProfilesDir, name)); err != nil {
			t.Errorf("the event's profile %s was not copied under its name: %v", name, err)
		}
	}
	traces, err := session.TraceFiles(cfg.Out)
	if err != nil || len(traces) != 1 || filepath.Base(traces[0]) != ev.Trace {
		t.Errorf("traces %v (%v), want %s", traces, err, ev.Trace)
	}
}

// TestWatchAgentURLWithPprof points watch at the agent's tree of a service that also serves
// pprof: both are used, and the MemStats block is not scraped (the agent's samples are exact).
func TestWatchAgentURLWithPprof(t *testing.T) {
	a := startAgent(t)
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", a.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cfg := watchConfig(t)
	if _, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/"); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Target.PprofURL != srv.URL+"/debug/pprof/" || s.Manifest.Target.AgentURL == "" {
		t.Errorf("target %+v", s.Manifest.Target)
	}
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range samples {
		if smp.Go != nil && smp.Go.Source != "runtime/metrics" {
			t.Fatalf("a %s sample: the recorder scraped MemStats beside the agent", smp.Go.Source)
		}
	}
	if n := len(s.ProfilesOf(session.KindHeap, true)); n < 2 { // the agent's and pprof's
		t.Errorf("%d periodic heap profiles", n)
	}
}

func TestWatchAgentToken(t *testing.T) {
	const tok = "token-0123456789abcdef"
	a := startAgent(t, agent.WithToken(tok))
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	cfg := watchConfig(t)
	_, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/")
	if !errors.Is(err, agentclient.ErrUnauthorized) {
		t.Fatalf("without the token: %v", err)
	}
	cfg.Token = tok
	if _, err := Watch(context.Background(), cfg, srv.URL+"/debug/memdoctor/"); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	s, err := session.Open(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if samples, err := s.ReadSamples(); err != nil || len(samples) == 0 {
		t.Fatalf("%v, %d samples", err, len(samples))
	}
}

func TestGCRate(t *testing.T) {
	var g gcRate
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, ok := g.add(t0, 10); ok {
		t.Error("a rate from one reading")
	}
	g.add(t0.Add(5*time.Second), 20)
	r, ok := g.add(t0.Add(10*time.Second), 40)
	if !ok || r != 3 {
		t.Errorf("rate %v %v, want 3/s", r, ok)
	}
	if r, _ := g.add(t0.Add(11*time.Second), 0); r != 3 { // a restart: keep the last rate
		t.Errorf("after a reset %v", r)
	}
}

// samplesOf reads a session's samples, failing the test on error.
func samplesOf(t *testing.T, s *session.Session) []session.Sample {
	t.Helper()
	out, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gcOf reads a session's gctrace cycles, failing the test on error.
func gcOf(t *testing.T, s *session.Session) []session.GCEvent {
	t.Helper()
	out, err := s.ReadGC()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
