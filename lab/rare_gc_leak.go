package lab

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func rareGCLeak() Scenario {
	return Scenario{
		Name: "rare-gc-leak",
		Story: "An API gateway authenticates each new client and keeps its session (a 16 KiB " +
			"blob of token, permissions and audit trail) in a map that nothing ever evicts. The " +
			"gateway does little else per request, so almost everything it allocates is what it " +
			"keeps: about 1.5 MiB a second on a heap that starts at a few MiB. Under GOGC=100 the " +
			"next GC waits for the heap to double, so the bigger the leak has made the heap, the " +
			"longer between GCs: after half a minute the GC runs every 20 s and more, and the live " +
			"heap is measured less and less often while it keeps growing. The fix is to expire " +
			"the sessions (a TTL, or a bounded LRU) and to keep only what a later request needs.",
		Expect: Expect{
			Kinds:   []string{kindHeapLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*gatewaySessions).keep",
			Absent:  []string{kindGoroutineLeak, kindTransientSpike, kindNonGoMemory},
			// The GC runs rarely by the leak's own doing: 3 to 5 cycles in the first minute,
			// the last 15-20 s before the end. Through the agent, whose heap in use is read
			// every second up to the end, it is confirmed by 45 s; from profiles alone (a heap
			// profile shows the GC before the last) or a run's few cycles, it may stay a
			// suspicion, with how long to watch, until the next cycles.
			Confirm:  90 * time.Second,
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runRareGCLeak,
	}
}

const (
	gatewayLogins       = 96       // new clients a second
	gatewaySessionBytes = 16 << 10 // kept per client
	gatewayLabCap       = 1 << 30  // lab safety valve: past it the oldest sessions are dropped
)

func runRareGCLeak(ctx context.Context, env Env) error {
	g := &gatewaySessions{byID: make(map[string][]byte)}
	return serve(ctx, env, service{
		name:   "rare-gc-leak",
		routes: map[string]http.HandlerFunc{"POST /login/{client}": g.handleLogin},
		loads: []load{{workers: 4, every: time.Second / gatewayLogins, send: func(ctx context.Context, c *client, _ int) error {
			return c.send(ctx, call{method: http.MethodPost, path: "/login/" + strconv.FormatInt(c.requests.Load(), 10)})
		}}},
	})
}

// gatewaySessions is the gateway's session table. The bug: nothing ever removes an entry.
type gatewaySessions struct {
	mu    sync.Mutex
	byID  map[string][]byte
	order []string // lab bookkeeping for the safety valve
	bytes int
}

func (g *gatewaySessions) handleLogin(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("client")
	g.keep(id)
	io.WriteString(w, "ok\n")
}

// keep builds a client's session and keeps it for ever.
func (g *gatewaySessions) keep(id string) {
	blob := make([]byte, gatewaySessionBytes)
	rand.Read(blob[:64]) // the token; the rest is permissions and the audit trail
	g.mu.Lock()
	defer g.mu.Unlock()
	g.byID[id] = blob
	g.order = append(g.order, id)
	g.bytes += len(blob)
	for g.bytes > gatewayLabCap && len(g.order) > 0 {
		g.bytes -= len(g.byID[g.order[0]])
		delete(g.byID, g.order[0])
		g.order = g.order[1:]
	}
}
