//go:build linux && (amd64 || arm64)

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/holders"
)

// TestHoldersPrometheusLabels reads the holders of a real library's leak behind interfaces: a
// web server instrumented with github.com/prometheus/client_golang v1.24.1 (built through the
// module proxy, testdata/prom-labels) by a middleware whose counter and histogram vectors,
// made with promauto, are labelled by the request's path. The truth, from client_golang's
// source (prometheus/vec.go, registry.go): each new label value gets a series, a
// metricWithLabelValues whose metric (an interface: *counter, *histogram) is kept in the
// vector's metricMap.metrics (map[uint64][]metricWithLabelValues) until DeleteLabelValues;
// the vectors are the middleware's closure's and the default registry's, whose Registry the
// compiler lays out as a static (var defaultRegistry = NewRegistry(), inlined), so its maps
// are roots no variable names: the walk used to name the paths "global at 0x...+16+144+0…"
// through ten near-identical untyped prefixes. memdoctor must name the registry through the
// variable that points at it and the vectors through the Collector interface, every step
// typed, and offer to cut the vectors' series maps.
func TestHoldersPrometheusLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program on client_golang")
	}
	srv, addr, _ := startTestdataServer(t, "prom-labels", "github.com/prometheus/client_golang v1.24.1")
	base := "http://" + addr
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range 3000 {
		resp, err := client.Get(fmt.Sprintf("%s/users/%d/orders", base, i))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"holders", "--json", "-", "--site", "main.instrument.func1", fmt.Sprint(srv.Process.Pid)}
	r := memdoctor(t, ctx, args...)
	if r.code != 0 {
		t.Fatalf("memdoctor %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	var res holders.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("holders JSON: %v\n%s", err, r.stdout)
	}
	if len(res.Culprits) != 1 {
		t.Fatalf("%d culprits; want main.instrument.func1", len(res.Culprits))
	}
	c := res.Culprits[0]
	reachable := c.Bytes - c.GarbageBytes
	if c.Samples-c.GarbageSamples < 50 {
		t.Fatalf("%d sampled objects, %d of them garbage; want at least 50 reachable after 3000 paths", c.Samples, c.GarbageSamples)
	}
	var held float64
	for _, p := range c.Paths {
		if strings.Contains(p.Expr, ".MetricVec.metricMap.metrics") && strings.HasPrefix(p.Expr, "github.com/prometheus/client_golang/prometheus.defaultRegistry.collectorsByID[value].(*github.com/prometheus/client_golang/prometheus.") && p.Root.Static {
			held += p.Bytes
		}
		for _, h := range p.Hops {
			if strings.HasSuffix(h.Type, "-byte object") || hasOffset(h.Expr) {
				t.Errorf("a step of %s is not named: %+v", p.Expr, p.Hops)
				break
			}
		}
	}
	if held < 0.8*reachable {
		t.Errorf("the vectors' metricMap.metrics, named from the default registry (a static prometheus.defaultRegistry points at), hold %.0f%% of the reachable sampled bytes on the paths named; want at least 80%%:\n%s", 100*held/reachable, pathsOf(c))
	}
	var cut float64
	var frees uint64
	for _, k := range c.Cuts {
		if k.Field == "prometheus.metricMap.metrics" && strings.HasSuffix(k.Expr, ".MetricVec.metricMap.metrics") {
			cut += k.Share
			frees += k.Frees
		}
	}
	if cut < 0.9 || float64(frees) < reachable/2 {
		t.Errorf("want to cut the vectors' prometheus.metricMap.metrics, holding at least 90%% of the culprit and freeing half its %.0f reachable bytes; cuts %+v", reachable, c.Cuts)
	}
}

func pathsOf(c holders.Culprit) string {
	var b strings.Builder
	for _, p := range c.Paths {
		fmt.Fprintf(&b, "%5.1f%% %s\n", 100*p.Share, p.Expr)
	}
	return b.String()
}
