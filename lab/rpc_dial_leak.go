package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/rpc"
	"strconv"
	"sync"
	"time"
)

func rpcDialLeak() Scenario {
	return Scenario{
		Name: "rpc-dial-leak",
		Story: "A checkout service reserves every order's items with the warehouse, through the " +
			"warehouse's net/rpc API over HTTP. Its reserve dials the warehouse with rpc.DialHTTP for every " +
			"call and never closes the client. A net/rpc client owns its connection and a " +
			"goroutine that reads the replies (Client.input) until Close; the warehouse keeps " +
			"its side of each connection too. So every order leaks a connection and its " +
			"goroutines, about 30 a second. None of those goroutines has a frame of the program " +
			"in its stack: net/rpc's NewClientWithCodec created them, called from reserve's " +
			"rpc.DialHTTP. The fix is one client, dialled once and shared (a net/rpc Client is safe " +
			"for concurrent use), or defer client.Close().",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*checkout).reserve",
			Line:     checkoutDialLine,
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runRPCDialLeak,
	}
}

const (
	checkoutRequests = 30   // per second
	checkoutLabCap   = 3000 // lab safety valve: past it reserve closes its client
	// checkoutDialLine is the line of reserve's rpc.DialHTTP (TestExpectedLines checks it).
	checkoutDialLine = 101
)

func runRPCDialLeak(ctx context.Context, env Env) error {
	env = env.withDefaults()
	ln, err := listenLoopback(env.Addr)
	if err != nil {
		return fmt.Errorf("lab: rpc-dial-leak: warehouse: %w", err)
	}
	rs := rpc.NewServer()
	if err := rs.RegisterName("Warehouse", &warehouse{}); err != nil {
		ln.Close()
		return fmt.Errorf("lab: rpc-dial-leak: %w", err)
	}
	// The warehouse serves net/rpc's HTTP transport (rpc.HandleHTTP's), on a server of its own.
	wh := &http.Server{Handler: rs, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(env.Logger.Handler(), slog.LevelDebug)}
	go wh.Serve(ln) // returns when wh is closed
	defer wh.Close()
	co := &checkout{warehouse: ln.Addr().String()}
	return serve(ctx, env, service{
		name: "rpc-dial-leak",
		routes: map[string]http.HandlerFunc{
			"POST /checkout/{sku}": co.handleCheckout,
		},
		stopping: co.close,
		loads: []load{{workers: 8, every: time.Second / checkoutRequests, send: func(ctx context.Context, c *client, _ int) error {
			sku := strconv.FormatInt(c.requests.Load()%10000, 10)
			return c.send(ctx, call{method: http.MethodPost, path: "/checkout/" + sku})
		}}},
	})
}

// checkout is the checkout service's client of the warehouse.
type checkout struct {
	warehouse string // the warehouse's RPC address

	// Lab bookkeeping, not part of the bug: open records the clients reserve left open, so
	// that close can close them when the scenario stops, and caps them (checkoutLabCap).
	// The production code had no such list.
	mu      sync.Mutex
	open    []io.Closer
	stopped bool
}

func (co *checkout) handleCheckout(w http.ResponseWriter, r *http.Request) {
	left, err := co.reserve(r.PathValue("sku"))
	w.Header().Set("Content-Type", "text/plain")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	io.WriteString(w, strconv.Itoa(left))
}

// reserve reserves one item with the warehouse and returns how many are left. The bug: it
// dials for every call and never closes the client (checkoutDialLine is the rpc.DialHTTP below).
func (co *checkout) reserve(sku string) (int, error) {
	client, err := rpc.DialHTTP("tcp", co.warehouse)
	if err != nil {
		return 0, err
	}
	if !co.leaked(client) {
		defer client.Close() // the scenario is stopping, or past the lab's cap
	}
	var left int
	if err := client.Call("Warehouse.Reserve", sku, &left); err != nil {
		return 0, fmt.Errorf("warehouse: %w", err)
	}
	return left, nil
}

// leaked records a client left open, unless the scenario is stopping or the lab's cap is
// reached.
func (co *checkout) leaked(c io.Closer) bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.stopped || len(co.open) >= checkoutLabCap {
		return false
	}
	co.open = append(co.open, c)
	return true
}

// close closes the clients reserve left open (lab bookkeeping): their connections close, and
// the warehouse's side of each ends.
func (co *checkout) close() {
	co.mu.Lock()
	co.stopped = true
	open := co.open
	co.open = nil
	co.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// warehouse is the warehouse's RPC service.
type warehouse struct{}

// Reserve reserves one item of sku and says how many are left.
func (*warehouse) Reserve(sku string, left *int) error {
	n, err := strconv.Atoi(sku)
	if err != nil {
		return errors.New("no such item: " + sku)
	}
	*left = n % 50
	return nil
}
