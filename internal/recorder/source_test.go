package recorder

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

// agentAndPprof serves an agent and net/http/pprof side by side, counting the requests
// that reach each.
func agentAndPprof(t *testing.T) (url string, agentHits, pprofHits *atomic.Int64) {
	a := startAgent(t)
	agentHits, pprofHits = new(atomic.Int64), new(atomic.Int64)
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", counting(agentHits, a.Handler()))
	mux.Handle("/debug/pprof/", counting(pprofHits, http.HandlerFunc(pprof.Index)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, agentHits, pprofHits
}

func counting(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

// TestWatchSource records one service that serves both an agent and pprof from each vantage
// point: pprof never touches the agent, agent never touches pprof, auto uses both.
func TestWatchSource(t *testing.T) {
	if testing.Short() {
		t.Skip("records for more than five seconds")
	}
	for _, tc := range []struct {
		source           string
		url              string // appended to the service's URL
		wantAgent, wantP bool
		goSource         string // of the Go samples
	}{
		{SourcePprof, "", false, true, "memstats"},
		{SourcePprof, "/debug/memdoctor/", false, true, "memstats"}, // the pprof index beside it
		{SourceAgent, "", true, false, "runtime/metrics"},
		{SourceAgent, "/debug/pprof/", true, false, "runtime/metrics"},
		{SourceAuto, "", true, true, "runtime/metrics"},
	} {
		t.Run(tc.source+tc.url, func(t *testing.T) {
			base, agentHits, pprofHits := agentAndPprof(t)
			cfg := watchConfig(t)
			cfg.Source = tc.source
			if _, err := Watch(context.Background(), cfg, base+tc.url); err != nil {
				t.Fatal(err)
			}
			if (agentHits.Load() > 0) != tc.wantAgent || (pprofHits.Load() > 0) != tc.wantP {
				t.Errorf("%d agent and %d pprof request(s); want agent %v, pprof %v", agentHits.Load(), pprofHits.Load(), tc.wantAgent, tc.wantP)
			}
			s := openSession(t, cfg.Out)
			goSamples := 0
			for _, smp := range samplesOf(t, s) {
				if smp.Go != nil {
					goSamples++
					if smp.Go.Source != tc.goSource {
						t.Fatalf("a %s sample, want only %s", smp.Go.Source, tc.goSource)
					}
				}
				if smp.Pprof != nil && !tc.wantP {
					t.Fatalf("index counts though pprof is not a source: %+v", *smp.Pprof)
				}
			}
			if goSamples == 0 {
				t.Errorf("no Go samples")
			}
			m := s.Manifest.Target
			if (m.AgentURL != "") != tc.wantAgent || (m.PprofURL != "") != tc.wantP {
				t.Errorf("target agent %q, pprof %q", m.AgentURL, m.PprofURL)
			}
			if tc.source != SourceAuto && !hasNote(s, "--source "+tc.source+": recorded from") {
				t.Errorf("no note of the source: %q", s.Manifest.Notes)
			}
		})
	}
}

// TestWatchSourceRequired: --source agent fails on a service without an agent, --source
// pprof on one without pprof, each saying which.
func TestWatchSourceRequired(t *testing.T) {
	onlyPprof := httptest.NewServer(http.HandlerFunc(pprof.Index))
	defer onlyPprof.Close()
	a := startAgent(t)
	onlyAgent := httptest.NewServer(a.Handler())
	defer onlyAgent.Close()
	for _, tc := range []struct {
		source, url, want string
	}{
		{SourceAgent, onlyPprof.URL, "--source agent: no memdoctor agent answered"},
		{SourcePprof, onlyAgent.URL, "--source pprof: "},
	} {
		cfg := watchConfig(t)
		cfg.Source = tc.source
		_, err := Watch(context.Background(), cfg, tc.url)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("--source %s on %s: %v; want an error starting %q", tc.source, tc.url, err, tc.want)
		}
		if _, serr := session.Open(cfg.Out); serr == nil {
			t.Errorf("--source %s: a session was created though watch failed", tc.source)
		}
	}
}
