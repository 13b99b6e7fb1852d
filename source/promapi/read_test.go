package promapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// level is the constant reading the mapping test gives a gauge: distinct per quantity and
// per target, so that a quantity mapped to the wrong series shows.
func level(q quantity, i int) float64 { return float64(int(q)+1)*1e6 + float64(i) }

func twoTargets() []Labels {
	return []Labels{
		{"job": "api", "instance": "10.0.0.1:8080"},
		{"job": "api", "instance": "10.0.0.2:8080", "zone": "b"},
	}
}

// readAll reads every target's evidence, by name.
func readAll(t *testing.T, cfg Config) (map[string]*evidence.Evidence, *Result) {
	t.Helper()
	out := map[string]*evidence.Evidence{}
	res, err := Read(context.Background(), cfg, func(tg Target) error {
		if _, dup := out[tg.Labels.Name()]; dup {
			t.Errorf("target %s read twice", tg.Labels.Name())
		}
		out[tg.Labels.Name()] = tg.Evidence
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func TestReadMapsEveryQuantity(t *testing.T) {
	started := t0.Add(-time.Hour)
	f := &fakeProm{targets: twoTargets(), interval: 15 * time.Second, version: "go1.26.1"}
	f.value = func(q quantity, i int, at time.Time) (float64, bool) {
		secs := at.Sub(t0).Seconds()
		switch q {
		case qStart:
			return float64(started.Unix()), true
		case qGOGC:
			return []float64{-1, 200}[i], true
		case qGOMemLimit:
			return []float64{math.MaxInt64, 512 << 20}[i], true
		case qGOMAXPROCS:
			return 4, true
		case qRetainedShare:
			return level(qHeapFree, i) / level(qRSS, i), true
		case qGCCPU, qGCAssist, qAvailableCPU, qLive, qScan:
			return level(q, i) + secs, i == 0 // runtime/metrics on the first target only
		case qGCCPUFraction:
			return 0.05, i == 1 // an older client on the second, its GC ending at each scrape
		case qLastGC:
			return float64(at.Unix()), i == 1
		}
		for _, qq := range queries {
			if qq.q == q && qq.counter {
				return level(q, i) + secs, true
			}
		}
		return level(q, i), true
	}
	evs, res := readAll(t, Config{URL: f.start(t), Window: 10 * time.Minute, End: t0.Add(10 * time.Minute)})
	if res.Step != 15*time.Second || res.StepSource != "scrape interval" {
		t.Errorf("step = %s (%s), want the scrape interval 15s", res.Step, res.StepSource)
	}
	if res.Targets != 2 || res.Groups != 1 || len(evs) != 2 {
		t.Fatalf("read %d targets in %d groups (%d evidences), want 2 in 1", res.Targets, res.Groups, len(evs))
	}
	if got := len(f.rangeQueries()); got != len(queries) {
		t.Errorf("%d range queries for 2 targets, want one per quantity (%d)", got, len(queries))
	}
	for i, l := range twoTargets() {
		ev := evs[l.Name()]
		if ev == nil {
			t.Fatalf("no evidence for %s", l.Name())
		}
		gauges := []struct {
			q quantity
			s *evidence.Series
		}{
			{qRSS, &ev.RSS}, {qHeapInUse, &ev.HeapInUse}, {qHeapGoal, &ev.HeapGoal}, {qHeapFree, &ev.HeapFree},
			{qRuntimeResident, &ev.RuntimeResident}, {qStacks, &ev.Stacks}, {qGoroutines, &ev.Goroutines},
		}
		for _, g := range gauges {
			if g.s.Len() != 41 || g.s.Last().V != level(g.q, i) || g.s.Src != evidence.SourcePrometheus {
				t.Errorf("%s: quantity %d: %d readings, last %.0f from %s; want 41 of %.0f from prometheus", l.Name(), g.q, g.s.Len(), g.s.Last().V, g.s.Src, level(g.q, i))
			}
		}
		counters := []struct {
			q quantity
			s *evidence.Series
		}{{qGCCycles, &ev.GCCycles}, {qAllocBytes, &ev.AllocBytes}, {qAllocObjects, &ev.AllocObjects}, {qProcessCPU, &ev.ProcessCPU}}
		for _, c := range counters {
			if c.s.First().V != level(c.q, i) || c.s.Increase() != 600 {
				t.Errorf("%s: counter %d starts at %.0f and rose %.0f, want %.0f and 600", l.Name(), c.q, c.s.First().V, c.s.Increase(), level(c.q, i))
			}
		}
		if ev.Target.Name != l.Name() || ev.Target.GoVersion != "go1.26.1" || !ev.Target.Started.Equal(started) || ev.Mode != "prometheus" {
			t.Errorf("%s: target %+v", l.Name(), ev.Target)
		}
		if ev.Pacer.GOMAXPROCS != 4 || !ev.Pacer.HasGoMemory || ev.Pacer.NonHeap != level(qNonHeap, i) {
			t.Errorf("%s: pacer %+v", l.Name(), ev.Pacer)
		}
		if ev.Aligned != 41 || ev.Retained.Len() != 41 || ev.Retained.Last().V != level(qHeapFree, i) || ev.RetainedShare.Len() != 41 {
			t.Errorf("%s: %d aligned readings, retained %d (last %.0f), share %d", l.Name(), ev.Aligned, ev.Retained.Len(), ev.Retained.Last().V, ev.RetainedShare.Len())
		}
		if ev.Latest == nil || ev.Latest.RSSBytes != uint64(level(qRSS, i)) || ev.Latest.RetainedFreeBytes != uint64(level(qHeapFree, i)) ||
			ev.Latest.FragmentationBytes != uint64(level(qHeapUnused, i)) || ev.Latest.GoSource != "prometheus" {
			t.Errorf("%s: latest split %+v", l.Name(), ev.Latest)
		}
		for _, gap := range []string{evidence.GapNonGo, evidence.GapHeapSnaps, evidence.GapBudget} {
			if ev.Gaps[gap] == "" {
				t.Errorf("%s: no reason given for %q", l.Name(), gap)
			}
		}
		if !ev.Start.Equal(t0) || !ev.End.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("%s: window %s - %s", l.Name(), ev.Start, ev.End)
		}
	}
	// The first target exposes runtime/metrics: the live heap and the GC's CPU are read.
	a, b := evs["api/10.0.0.1:8080"], evs["api/10.0.0.2:8080"]
	if a.Pacer.GOGC != -1 || a.Pacer.GOMemLimit != 0 || b.Pacer.GOGC != 200 || b.Pacer.GOMemLimit != 512<<20 {
		t.Errorf("GOGC off and an unset limit read as %v, %v; 200 and 512 MiB as %v, %v", a.Pacer.GOGC, a.Pacer.GOMemLimit, b.Pacer.GOGC, b.Pacer.GOMemLimit)
	}
	if a.Live.Len() != 41 || a.GCCPU.Increase() != 600 || a.GCAssist.Len() != 41 || a.AvailableCPU.Len() != 41 || a.Gaps[evidence.GapGCCPU] != "" {
		t.Errorf("runtime/metrics target: live %d, GC CPU +%.0f, assist %d, available %d, gap %q", a.Live.Len(), a.GCCPU.Increase(), a.GCAssist.Len(), a.AvailableCPU.Len(), a.Gaps[evidence.GapGCCPU])
	}
	// The second gives go_memstats_gc_cpu_fraction: 5% of 4 CPUs over 600 s is 120 CPU-seconds.
	if got := b.GCCPU.Increase(); math.Abs(got-120) > 1e-6 {
		t.Errorf("GC CPU from the fraction rose %.3f s, want 120", got)
	}
	// ... and its live heap comes from the goal at GOGC=200: goal / 3.
	if want := level(qHeapGoal, 1) / 3; b.Live.Len() != 41 || math.Abs(b.Live.Last().V-want) > 1 {
		t.Errorf("live heap from the goal: %d readings, last %.0f; want 41 of %.0f", b.Live.Len(), b.Live.Last().V, want)
	}
}

func TestReadGroupsLargeFleets(t *testing.T) {
	var targets []Labels
	for i := range 5 {
		targets = append(targets, Labels{"job": "api", "instance": fmt.Sprintf("10.0.0.%d:8080", i)})
	}
	f := &fakeProm{targets: targets, interval: 15 * time.Second}
	f.value = func(q quantity, i int, at time.Time) (float64, bool) { return level(q, i), true }
	window := 10 * time.Minute
	// Room for the readings of two targets at a time.
	perTarget := (int(window/(15*time.Second)) + 1) * len(queries)
	evs, res := readAll(t, Config{URL: f.start(t), Window: window, End: t0.Add(window), MaxReadings: 2 * perTarget})
	if res.Groups != 3 || len(evs) != 5 {
		t.Fatalf("%d groups, %d targets; want 3 groups of at most 2, and 5 targets", res.Groups, len(evs))
	}
	for i, l := range targets {
		if ev := evs[l.Name()]; ev == nil || ev.RSS.Last().V != level(qRSS, i) || ev.RSS.Len() != 41 {
			t.Errorf("%s: wrong or missing readings", l.Name())
		}
	}
	qs := f.rangeQueries()
	if len(qs) != 3*len(queries) {
		t.Errorf("%d range queries, want %d (one per quantity per group)", len(qs), 3*len(queries))
	}
	if !strings.Contains(qs[len(qs)-1], `instance=~"10\\.0\\.0\\.4:8080"`) {
		t.Errorf("the last group's query does not select its target: %s", qs[len(qs)-1])
	}
}

func TestReadSendsCredentials(t *testing.T) {
	for _, tc := range []struct {
		name  string
		auth  Auth
		check func(h http.Header) bool
	}{
		{"bearer", Auth{BearerToken: "s3cret"}, func(h http.Header) bool { return h.Get("Authorization") == "Bearer s3cret" }},
		{"basic", Auth{Username: "ann", Password: "pw"}, func(h http.Header) bool {
			r := &http.Request{Header: h}
			u, p, ok := r.BasicAuth()
			return ok && u == "ann" && p == "pw"
		}},
		{"tenant", Auth{Headers: http.Header{"X-Scope-Orgid": {"team-a"}}}, func(h http.Header) bool { return h.Get("X-Scope-OrgID") == "team-a" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProm{targets: twoTargets()[:1], interval: 15 * time.Second}
			f.value = func(q quantity, i int, at time.Time) (float64, bool) { return 1, true }
			readAll(t, Config{URL: f.start(t), Window: time.Minute, End: t0, Auth: tc.auth})
			for _, h := range f.headers {
				if !tc.check(h) {
					t.Fatalf("a request went without the credentials: %v", h)
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		cfg    func(*Config)
		want   string
	}{
		{"unauthorized", 401, "no", nil, "check --bearer-token"},
		{"not an API", 404, "404 page not found", nil, "base URL of a Prometheus-compatible API"},
		{"bad selector", 400, `{"status":"error","errorType":"bad_data","error":"parse error: unexpected character"}`, nil, "check --selector"},
		{"not JSON", 200, "<html>hello</html>", nil, "not a Prometheus API response"},
		{"server error", 503, "overloaded", nil, "server error: 503"},
		{"too large", 200, `{"status":"success","data":{"resultType":"vector","result":[]}}` + strings.Repeat(" ", 4096), func(c *Config) { c.MaxResponseBytes = 1024 }, "too large"},
		{"unreachable", 0, "", func(c *Config) { c.URL = closed.URL }, "cannot connect"},
		{"not a URL", 0, "", func(c *Config) { c.URL = "prometheus:9090" }, "not a Prometheus URL"},
		{"credentials in the URL", 0, "", func(c *Config) { c.URL = "http://u:p@prometheus:9090" }, "--basic-auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProm{targets: twoTargets(), interval: 15 * time.Second, status: tc.status, body: tc.body}
			cfg := Config{URL: f.start(t), Window: time.Minute, End: t0, Timeout: 5 * time.Second}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			_, err := Read(context.Background(), cfg, func(Target) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestReadTargetCount(t *testing.T) {
	f := &fakeProm{targets: twoTargets(), interval: 15 * time.Second}
	f.value = func(q quantity, i int, at time.Time) (float64, bool) { return 1, true }
	url := f.start(t)
	_, err := Read(context.Background(), Config{URL: url, MaxTargets: 1, End: t0}, func(Target) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "--max-targets") {
		t.Errorf("2 targets past --max-targets 1: %v", err)
	}
	_, err = Read(context.Background(), Config{URL: url, Selector: `job="none"`, End: t0}, func(Target) error { return nil })
	if !errors.Is(err, ErrNoTargets) || !strings.Contains(err.Error(), `go_goroutines{job="none"}`) {
		t.Errorf("no target: %v", err)
	}
}

func TestStepIsBounded(t *testing.T) {
	f := &fakeProm{targets: twoTargets()[:1], interval: time.Second}
	f.value = func(q quantity, i int, at time.Time) (float64, bool) { return 1, true }
	_, res := readAll(t, Config{URL: f.start(t), Window: 30 * 24 * time.Hour, End: t0})
	if want := 648 * time.Second; res.Step != want || res.StepSource != "scrape interval, raised to bound the readings" {
		t.Errorf("30 days at a 1 s scrape interval: step %s (%s), want %s, raised", res.Step, res.StepSource, want)
	}
	_, res = readAll(t, Config{URL: f.start(t), Window: time.Hour, End: t0, Step: 30 * time.Second})
	if res.Step != 30*time.Second || res.StepSource != "flag" {
		t.Errorf("--step 30s gave %s (%s)", res.Step, res.StepSource)
	}
}

// FuzzRead: whatever a server answers to the range queries, Read returns an error or
// evidence, and never panics.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"api","instance":"h:1"},"values":[[1795496400,"1"],[1795496415,"NaN"],[1795496430,"-3"],[99999999999,"1e308"]]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"error","errorType":"bad_data","error":"x"}`,
		`{"status":"success","data":{"resultType":"matrix","result":[null,{"metric":null,"values":null}]}}`,
		`not json`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		end := time.Unix(1795496400, 0).Add(10 * time.Minute)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			if strings.HasPrefix(r.Form.Get("query"), "count_over_time(") {
				fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"api","instance":"h:1"},"value":[1795497000,"40"]}]}}`)
				return
			}
			fmt.Fprint(w, body)
		}))
		defer srv.Close()
		Read(context.Background(), Config{URL: srv.URL, Window: 10 * time.Minute, End: end, Timeout: 5 * time.Second}, func(tg Target) error {
			if tg.Evidence == nil {
				t.Fatal("nil evidence")
			}
			return nil
		})
	})
}
