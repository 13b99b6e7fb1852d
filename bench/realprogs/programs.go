package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Roles of a version: the release with the bug, one with an incomplete fix, one with the fix.
const (
	before  = "before"
	partial = "partial"
	after   = "after"
)

// kinds are the memdoctor finding kinds that diagnose a bug right (any one of them will do);
// none means "nothing at warning or above".
type kinds []string

func (k kinds) String() string {
	if len(k) == 0 {
		return "none"
	}
	return strings.Join(k, "|")
}

func (k kinds) has(kind string) bool {
	for _, x := range k {
		if x == kind {
			return true
		}
	}
	return false
}

// version is one release of a program and what memdoctor should say about it under the load.
type version struct {
	version string
	role    string
	expect  kinds
	// culprits are substrings of the function memdoctor should name among the top three
	// culprits of the expected finding (any one of them will do).
	culprits []string
	// line, when set, is the line the culprit must be named at (a library's goroutines: the
	// program's call that made them).
	line int
	// args are added to the program's arguments for this version (a program built from
	// local source has one binary for both: -fixed closes what it made).
	args []string
}

// launch is a program set up in a work directory, ready to start.
type launch struct {
	args  []string // the binary's arguments
	env   []string // added to the environment
	pprof string   // the URL memdoctor watches
	// noPprof, when set, is the same launch without the program's profiling endpoint (-memory):
	// its arguments, and a TCP address that answers once it serves.
	noPprof func() (args []string, ready string)
	// load drives the trigger until ctx is done and says what it did.
	load func(ctx context.Context) string
	// close stops whatever setup started beside the program (backends, config servers).
	close func()
}

// program is a real upstream program with a known, fixed memory bug.
type program struct {
	name    string
	module  string // module path
	pkg     string // import path of the main package
	install bool   // go install pkg@version works; otherwise build from the module's source
	// toolchain is the GOTOOLCHAIN the program is built with ("" for auto: the local Go, or a
	// newer one when the module needs it). Old releases whose dependencies pin a Go version
	// (quic-go's qtls forks) need the Go of their time.
	toolchain string
	// prepare adds to a source copy what the module zip lacks (generated assets).
	prepare func(src string) error
	// local, when set, is the program's source under testdata/libs: a module of its own,
	// built from that copy through the module proxy, one binary for every version.
	local    string
	bug      string
	trigger  string
	links    []string
	versions []version
	// holders says, by version, what `memdoctor holders` must name as the holder of the
	// leaked objects at the end of the watch (-holders): versions with a heap leak.
	holders map[string]holdersWant
	setup   func(work string) (*launch, error)
}

// binName is the name go install gives the binary: the last element of the package path,
// or the one before it when the last is a major version suffix (github.com/x/y/v2 -> y).
func (p *program) binName() string {
	elems := strings.Split(p.pkg, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return elems[len(elems)-2]
	}
	return last
}

// testCase is one program at one version.
type testCase struct {
	prog *program
	ver  version
}

// catalogue lists the programs. Each bug's trigger is a load generator in this directory.
func catalogue() []*program {
	return append([]*program{
		{
			name:    "coredns-axfr",
			module:  "github.com/coredns/coredns",
			pkg:     "github.com/coredns/coredns",
			install: true,
			bug:     "a zone transfer the client aborts leaves the file plugin's producer goroutine blocked on a channel send forever",
			trigger: "30 AXFRs/s of a 5000-record zone, each reset by the client after the first bytes",
			links: []string{
				"https://github.com/coredns/coredns/issues/6548",
				"https://github.com/coredns/coredns/pull/7516",
				"https://github.com/coredns/coredns/pull/8002",
			},
			versions: []version{
				{version: "v1.12.3", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"plugin/file.(*Zone).Transfer"}},
				// #7516 drained the producer but left the last send on an unguarded channel:
				// ServeDNS itself still blocks when the client is gone by then.
				{version: "v1.12.4", role: partial, expect: kinds{"goroutine-leak"}, culprits: []string{"plugin/transfer.(*Transfer).ServeDNS"}},
				{version: "v1.14.3", role: after, expect: nil, culprits: nil},
			},
			setup: setupCoreDNS,
		},
		{
			// The same bug built with Go 1.27, which serves /debug/pprof/goroutineleak: the GC
			// proves these producers leaked (nothing else can reach their channel), from one
			// snapshot.
			name:      "coredns-axfr-go1.27",
			module:    "github.com/coredns/coredns",
			pkg:       "github.com/coredns/coredns",
			install:   true,
			toolchain: "go1.27.0",
			bug:       "coredns-axfr's leak, in a binary built with Go 1.27: the goroutineleak profile lists the leaked producers",
			trigger:   "as coredns-axfr",
			links:     []string{"https://github.com/coredns/coredns/issues/6548", "https://go.dev/doc/go1.27"},
			versions: []version{
				{version: "v1.12.3", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"plugin/file.(*Zone).Transfer"}},
				{version: "v1.14.3", role: after, expect: nil, culprits: nil},
			},
			setup: setupCoreDNS,
		},
		{
			name:    "nats-queue-unsub",
			module:  "github.com/nats-io/nats-server/v2",
			pkg:     "github.com/nats-io/nats-server/v2",
			install: true,
			bug:     "in cluster mode, unsubscribing the last member of a queue group re-adds its subject+queue key to a map with weight 0: the map grows with every queue name ever used",
			trigger: "1000 SUB/UNSUB pairs/s, each with a new 1 KB subject and queue name",
			links: []string{
				"https://github.com/nats-io/nats-server/pull/3338",
			},
			versions: []version{
				{version: "v2.8.4", role: before, expect: kinds{"heap-leak"}, culprits: []string{"server.keyFromSub", "updateRouteSubscriptionMap"}},
				{version: "v2.9.0", role: after, expect: nil, culprits: nil},
			},
			holders: map[string]holdersWant{
				"v2.8.4": {
					site:  "github.com/nats-io/nats-server/v2/server.keyFromSub",
					path:  []string{".lqws[key]"},
					share: 0.8,
					cut:   "server.Account.lqws",
					truth: "each leaked key is a keyFromSub string kept only as a key of the account's lqws map " +
						"(last queue weight sent, server/route.go:1612 writes lqws[key] = 0 after the last unsubscribe deleted it from rm and lqws); " +
						"the account is the server's gacc, also in its accounts sync.Map and every client's acc",
				},
			},
			setup: setupNATS,
		},
		{
			name:      "caddy-chunked",
			module:    "github.com/caddyserver/caddy/v2",
			pkg:       "github.com/caddyserver/caddy/v2/cmd/caddy",
			install:   true,
			toolchain: "go1.19.13",
			bug:       "reverse_proxy buffers every chunked request body whole in memory before proxying it",
			trigger:   "one 128 MiB chunked upload through reverse_proxy every 10 s",
			links: []string{
				"https://github.com/caddyserver/caddy/issues/5366",
				"https://github.com/caddyserver/caddy/pull/5367",
			},
			versions: []version{
				// Each upload costs its whole size in memory: a spike per request, and a hotspot
				// whose cost is the peak memory it causes. Either names the bug, with its site.
				{version: "v2.6.3", role: before, expect: kinds{"transient-spike", "allocation-hotspot"}, culprits: []string{"reverseproxy.Handler.bufferedBody"}},
				{version: "v2.6.4", role: after, expect: nil, culprits: nil},
			},
			setup: setupCaddyChunked,
		},
		{
			name:      "caddy-httploader",
			module:    "github.com/caddyserver/caddy/v2",
			pkg:       "github.com/caddyserver/caddy/v2/cmd/caddy",
			install:   true,
			toolchain: "go1.19.13",
			bug:       "the HTTP config loader retries even after a success and drops 9 of its 10 responses unclosed: each poll leaks 9 connections and their 18 goroutines",
			trigger:   "admin.config.load from a local HTTP server with load_delay 1s, serving an unchanged config",
			links: []string{
				"https://github.com/caddyserver/caddy/issues/5158",
				"https://github.com/caddyserver/caddy/pull/5159",
			},
			versions: []version{
				{version: "v2.6.2", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"caddyconfig."}},
				{version: "v2.6.3", role: after, expect: nil, culprits: nil},
			},
			setup: setupCaddyHTTPLoader,
		},
		{
			name:    "caddy-perhost",
			module:  "github.com/caddyserver/caddy/v2",
			pkg:     "github.com/caddyserver/caddy/v2/cmd/caddy",
			install: true,
			bug:     "with per-host HTTP metrics on, every Host header ever received gets its series in each of the HTTP metrics vectors, kept for ever in client_golang's vectors behind Caddy's metrics registry: a client sending arbitrary Host headers grows the heap without bound",
			trigger: "300 requests/s, each with a Host header never sent before",
			links: []string{
				"https://github.com/caddyserver/caddy/issues/7208",
				"https://github.com/caddyserver/caddy/pull/7306",
			},
			versions: []version{
				{version: "v2.10.2", role: before, expect: kinds{"heap-leak"}, culprits: []string{"caddyhttp.(*metricsInstrumentedHandler).ServeHTTP"}},
				// v2.11 labels only the hosts the configuration names; the rest are "_other".
				{version: "v2.11.3", role: after},
			},
			holders: map[string]holdersWant{
				"v2.10.2": {
					site: "github.com/caddyserver/caddy/v2/modules/caddyhttp.(*metricsInstrumentedHandler).ServeHTTP",
					// The series map and its series; a series is many objects (the metric, its
					// buckets, labels, exemplars), so its paths are many: 30 hold about 80%.
					path:  []string{".metricMap.metrics"},
					share: 0.7,
					// One series map per vector (seven): the cuts name the heaviest three.
					cut:      "prometheus.metricMap.metrics",
					cutShare: 0.5,
					truth: "each request's labels (server, handler, host; code and method for the histograms) get a series in each vector's metricMap.metrics " +
						"(map[uint64][]metricWithLabelValues, client_golang's prometheus/vec.go), never deleted; the vectors are the http app's Metrics.httpMetrics " +
						"(modules/caddyhttp/metrics.go initHTTPMetrics) and are registered in the caddy.Context's metrics registry",
				},
			},
			setup: setupCaddyPerHost,
		},
		{
			name:    "alertmanager-swap",
			module:  "github.com/prometheus/alertmanager",
			pkg:     "github.com/prometheus/alertmanager/cmd/alertmanager",
			install: false, // ui/app/dist is built by npm and not in the module zip; go:embed needs it
			prepare: stubAlertmanagerUI,
			bug:     "an alert for a group that was just flushed and destroyed swaps in a new group, and the old group's run goroutine is never stopped",
			trigger: "a resolved alert for each of 10 groups, re-posted every 200 ms (group_wait 0s)",
			links: []string{
				"https://github.com/prometheus/alertmanager/issues/5182",
				"https://github.com/prometheus/alertmanager/pull/5241",
			},
			versions: []version{
				{version: "v0.32.1", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"dispatch.(*aggrGroup).run"}},
				// v0.32.2 has the fix but is not served by the module proxy (403); v0.32.3 adds only
				// a silence fix to it.
				{version: "v0.32.3", role: after, expect: nil, culprits: nil},
			},
			setup: setupAlertmanager,
		},
		{
			// The same bug built with Go 1.27: a leak the goroutineleak profile does not list
			// (the leaked groups stay reachable through their context), so a diagnosis must
			// find it the other way.
			name:      "alertmanager-swap-go1.27",
			module:    "github.com/prometheus/alertmanager",
			pkg:       "github.com/prometheus/alertmanager/cmd/alertmanager",
			install:   false,
			prepare:   stubAlertmanagerUI,
			toolchain: "go1.27.0",
			bug:       "alertmanager-swap's leak, in a binary built with Go 1.27: the goroutineleak profile stays empty",
			trigger:   "as alertmanager-swap",
			links:     []string{"https://github.com/prometheus/alertmanager/pull/5241", "https://go.dev/doc/go1.27"},
			versions: []version{
				{version: "v0.32.1", role: before, expect: kinds{"goroutine-leak"}, culprits: []string{"dispatch.(*aggrGroup).run"}},
				{version: "v0.32.3", role: after, expect: nil, culprits: nil},
			},
			setup: setupAlertmanager,
		},
	}, libPrograms()...)
}

// stubAlertmanagerUI gives ui/web.go's go:embed pattern a file to embed: the real UI is built
// by npm from ui/mantine-ui and is not part of the module. The dispatcher does not use it.
func stubAlertmanagerUI(src string) error {
	dist := filepath.Join(src, "ui", "app", "dist")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return err
	}
	page := "<!doctype html><title>Alertmanager</title><p>UI not built (memdoctor bench/realprogs).\n"
	return os.WriteFile(filepath.Join(dist, "index.html"), []byte(page), 0o644)
}

// localURL is the loopback URL of port with path.
func localURL(port int, path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

// matchesCulprit reports whether fn contains one of the expected culprit substrings.
func matchesCulprit(fn string, want []string) bool {
	for _, w := range want {
		if strings.Contains(fn, w) {
			return true
		}
	}
	return false
}
