package lab

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

func gatewayGC() Scenario {
	return Scenario{
		Name: "gateway-gc",
		Story: "An API gateway keeps a small live heap (a routing table of 40,000 routes and a " +
			"cache of upstream responses, about 25 MiB) but allocates hundreds of kilobytes of " +
			"short-lived garbage per request: cloned header maps, split paths, upstream header " +
			"maps and URLs, rewritten and re-enveloped response bodies, a response buffer sized " +
			"for the largest response, access-log lines. With " +
			"GOGC=100 the heap goal is only twice the live heap, so at a few hundred MiB/s of " +
			"allocation the GC runs many times a second, burns a large share of the CPU and " +
			"makes request goroutines do mark assists. In the story a 10 GiB ballast fixed it; " +
			"today the fix is GOMEMLIMIT (with GOGC=off or a high GOGC): let the heap use the " +
			"memory the service is given, so the GC runs rarely.",
		Expect: Expect{
			Kinds: []string{kindGCOverhead},
			// Its top allocating site is the other lever on the same GC work.
			Allowed:  []string{kindAllocationHotspot},
			Absent:   []string{kindHeapLeak},
			Budget:   "1GiB",
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runGatewayGC,
	}
}

const (
	gatewayTenants   = 1600
	gatewayResources = 25
	// gatewayMaxResponse is the largest response a route may give.
	gatewayMaxResponse = 256 << 10
)

func runGatewayGC(ctx context.Context, env Env) error {
	g := newGateway()
	return serve(ctx, env, service{
		name:   "gateway-gc",
		routes: map[string]http.HandlerFunc{"GET /v1/{tenant}/{resource}/{id}": g.handleProxy},
		loads:  []load{gatewayLoad(700)},
	})
}

type route struct {
	tenant, resource string
	upstream         string
	methods          []string
	headers          map[string]string
	timeout          time.Duration
	perMinute        int
}

type gateway struct {
	routes    map[string]*route // "tenant/resource"
	upstreams [][]byte          // cached upstream responses

	mu     sync.Mutex
	log    [1024]string // the last access-log lines
	logged int
}

var gatewayResourceNames = []string{"orders", "users", "carts", "payments", "invoices", "products", "reviews",
	"shipments", "returns", "coupons", "wishlists", "addresses", "sessions", "tokens", "reports", "exports",
	"imports", "webhooks", "events", "metrics", "alerts", "teams", "projects", "files", "comments"}

func newGateway() *gateway {
	g := &gateway{routes: make(map[string]*route, gatewayTenants*gatewayResources)}
	for t := range gatewayTenants {
		tenant := fmt.Sprintf("tenant-%04d", t)
		for _, res := range gatewayResourceNames[:gatewayResources] {
			g.routes[tenant+"/"+res] = &route{
				tenant:    tenant,
				resource:  res,
				upstream:  fmt.Sprintf("http://%s.%s.svc.cluster.local:8080", res, tenant),
				methods:   []string{http.MethodGet, http.MethodPost},
				headers:   map[string]string{"X-Tenant": tenant, "X-Upstream-Pool": res + "-v2"},
				timeout:   2 * time.Second,
				perMinute: 6000,
			}
		}
	}
	for i := range 16 {
		g.upstreams = append(g.upstreams, upstreamResponse(i, 16<<10))
	}
	return g
}

// upstreamResponse is a JSON document of about n bytes as an upstream
// service would return it, with internal host names and e-mail addresses.
func upstreamResponse(seed, n int) []byte {
	b := []byte(`{"items":[`)
	for i := 0; len(b) < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"href":"http://orders.internal:8080/orders/%d","owner":"user%d@corp.example","amount":%d}`,
			seed*1000+i, i, i%97, i*37%1000)
	}
	return append(b, "]}"...)
}

// inbound is the gateway's view of a client request.
type inbound struct {
	tenant, resource, id string
	header               http.Header
	segments             []string
	query                map[string][]string
	remote               string
}

type upstreamRequest struct {
	url    string
	header map[string][]string
	route  *route
	reqID  string
}

func (g *gateway) handleProxy(w http.ResponseWriter, r *http.Request) {
	in := parseInbound(r)
	rt := g.routes[in.tenant+"/"+in.resource]
	if rt == nil {
		http.NotFound(w, r)
		return
	}
	up := buildUpstream(in, rt)
	body := g.aggregate(up)
	// The response is assembled in a buffer sized for the largest response any route may
	// give, whatever this one's size: most of it is never written, all of it is garbage.
	out := make([]byte, 0, gatewayMaxResponse)
	out = fmt.Appendf(out, `{"request_id":%q,"bytes":%d}`, up.reqID, len(body))
	g.accessLog(in, up, len(body))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", up.reqID)
	w.Write(out)
}

func parseInbound(r *http.Request) *inbound {
	return &inbound{
		tenant:   r.PathValue("tenant"),
		resource: r.PathValue("resource"),
		id:       r.PathValue("id"),
		header:   r.Header.Clone(),
		segments: strings.Split(strings.Trim(r.URL.Path, "/"), "/"),
		query:    r.URL.Query(),
		remote:   r.RemoteAddr,
	}
}

func buildUpstream(in *inbound, rt *route) *upstreamRequest {
	var id [16]byte
	for i := range id {
		id[i] = byte(rand.Uint32())
	}
	h := make(map[string][]string, len(in.header)+len(rt.headers)+2)
	for k, v := range in.header {
		h[k] = append([]string(nil), v...)
	}
	for k, v := range rt.headers {
		h[k] = []string{v}
	}
	reqID := hex.EncodeToString(id[:])
	h["X-Request-Id"] = []string{reqID}
	h["X-Forwarded-For"] = []string{in.remote}
	return &upstreamRequest{
		url:    fmt.Sprintf("%s/%s/%s?%s", rt.upstream, in.resource, in.id, strings.Join(in.query["fields"], ",")),
		header: h,
		route:  rt,
		reqID:  reqID,
	}
}

var (
	internalHost = []byte("http://orders.internal:8080")
	publicHost   = []byte("https://api.example.com")
	corpDomain   = []byte("@corp.example")
	redacted     = []byte("@redacted")
)

// aggregate builds the response from six upstream responses, each
// rewritten for the public and wrapped in an envelope.
func (g *gateway) aggregate(up *upstreamRequest) []byte {
	var parts [][]byte
	for i := range 6 {
		src := g.upstreams[(len(up.reqID)+int(up.reqID[i])+i)%len(g.upstreams)]
		parts = append(parts, rewriteBody(src, up))
	}
	return bytes.Join(parts, []byte{','})
}

func rewriteBody(src []byte, up *upstreamRequest) []byte {
	body := bytes.ReplaceAll(src, internalHost, publicHost)
	var env bytes.Buffer
	env.WriteString(`{"upstream":"`)
	env.WriteString(up.route.upstream)
	env.WriteString(`","data":`)
	env.Write(body)
	env.WriteString(`}`)
	return bytes.ReplaceAll(env.Bytes(), corpDomain, redacted)
}

func (g *gateway) accessLog(in *inbound, up *upstreamRequest, n int) {
	line := fmt.Sprintf("%s %s %s/%s/%s -> %s %d bytes %s", time.Now().Format(time.RFC3339Nano), in.remote,
		in.tenant, in.resource, in.id, up.url, n, in.header.Get("User-Agent"))
	g.mu.Lock()
	g.log[g.logged%len(g.log)] = line
	g.logged++
	g.mu.Unlock()
}

// gatewayLoad sends GETs with typical client headers to random routes,
// about perSecond a second.
func gatewayLoad(perSecond int) load {
	header := http.Header{
		"Accept":          {"application/json"},
		"Accept-Language": {"en-US,en;q=0.9"},
		"Authorization":   {"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsYWIifQ.c2lnbmF0dXJl"},
		"User-Agent":      {"lab-client/1.0"},
		"X-Client-Id":     {"lab"},
		"X-Trace-Id":      {"4bf92f3577b34da6a3ce929d0e0e4736"},
	}
	var paths []string
	for i := range 512 {
		paths = append(paths, fmt.Sprintf("/v1/tenant-%04d/%s/%d?fields=id,amount,owner",
			i*7%gatewayTenants, gatewayResourceNames[i%gatewayResources], i*13))
	}
	return load{
		workers: 4,
		every:   time.Second / time.Duration(perSecond),
		send: func(ctx context.Context, c *client, w int) error {
			return c.send(ctx, call{method: http.MethodGet, path: paths[int(c.requests.Load())%len(paths)], header: header})
		},
	}
}
