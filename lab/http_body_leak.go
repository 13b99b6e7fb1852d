package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func httpBodyLeak() Scenario {
	return Scenario{
		Name: "http-body-leak",
		Story: "An order service checks stock with an inventory backend for every order line, " +
			"through an HTTP client with no limit on its connections. The backend answers 404 " +
			"for a product it no longer lists, one call in four, and on that path checkStock " +
			"returns early without closing the response body. An unclosed body pins its " +
			"connection for ever: the transport can neither reuse nor close it, and net/http " +
			"keeps its two goroutines (persistConn.readLoop and writeLoop) and the backend's " +
			"side of it, about 30 goroutines a second. None of those goroutines has a frame of " +
			"the program in its stack: they are net/http's, made by checkStock's requests. The " +
			"fix is defer resp.Body.Close() right after the error check of Get, on every path.",
		Expect: Expect{
			Kinds:   []string{kindGoroutineLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*stockClient).checkStock",
			Line:    stockGetLine,
			Absent:  []string{kindNonGoMemory, kindTransientSpike},
			Watch:   20 * time.Second, Interval: 2 * time.Second,
		},
		Run: runHTTPBodyLeak,
	}
}

const (
	stockRequests     = 40   // per second
	stockUnknownEvery = 4    // the backend no longer lists one product in this many
	stockOpenLabCap   = 4000 // lab safety valve: past it checkStock closes its bodies
)

func runHTTPBodyLeak(ctx context.Context, env Env) error {
	sc := &stockClient{}
	return serve(ctx, env, service{
		name: "http-body-leak",
		routes: map[string]http.HandlerFunc{
			"GET /order/{sku}": sc.handleOrder,
			"GET /stock/{sku}": handleStock,
		},
		listening: func(self *client) { sc.backend = newClient(self.base, 8, 0) },
		stopping:  sc.close,
		loads: []load{{workers: 16, every: time.Second / stockRequests, send: func(ctx context.Context, c *client, _ int) error {
			sku := strconv.FormatInt(c.requests.Load()%10000, 10)
			return c.send(ctx, call{method: http.MethodGet, path: "/order/" + sku})
		}}},
	})
}

// stockClient is the order service's client of the inventory backend.
type stockClient struct {
	backend *client

	// Lab bookkeeping, not part of the bug: unclosed records the bodies checkStock left
	// open, so that close can release the connections when the scenario stops, and caps
	// them (stockOpenLabCap). The production code had no such list.
	mu       sync.Mutex
	unclosed []io.Closer
	stopped  bool
}

func (sc *stockClient) handleOrder(w http.ResponseWriter, r *http.Request) {
	n, err := sc.checkStock(r.PathValue("sku"))
	w.Header().Set("Content-Type", "text/plain")
	if err != nil {
		io.WriteString(w, "stock unknown, order queued\n")
		return
	}
	io.WriteString(w, strconv.Itoa(n))
}

// checkStock asks the backend how many of a product are in stock. The bug: the early return
// on a non-200 status leaves the body open.
func (sc *stockClient) checkStock(sku string) (int, error) {
	resp, err := sc.backend.hc.Get(sc.backend.base + "/stock/" + sku)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		if !sc.leaked(resp.Body) {
			resp.Body.Close() // the scenario is stopping, or past the lab's cap
		}
		return 0, fmt.Errorf("inventory: %s", resp.Status)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(body))
}

// stockGetLine is the line of checkStock's Get (TestExpectedLines checks it): the request's
// line names the goroutines' maker, since the transport dialled their connection for that
// call and its body, left open, pins it. The client is shared and made once: closing it would
// not free a connection whose body is unread.
const stockGetLine = 84

// leaked records a body left open, unless the scenario is stopping or the lab's cap is
// reached.
func (sc *stockClient) leaked(body io.Closer) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.stopped || len(sc.unclosed) >= stockOpenLabCap {
		return false
	}
	sc.unclosed = append(sc.unclosed, body)
	return true
}

// close closes the bodies left open and drops the connections (lab bookkeeping).
func (sc *stockClient) close() {
	sc.mu.Lock()
	sc.stopped = true
	unclosed := sc.unclosed
	sc.unclosed = nil
	sc.mu.Unlock()
	for _, b := range unclosed {
		b.Close()
	}
	if sc.backend != nil {
		sc.backend.close()
	}
}

// handleStock is the inventory backend: a product it no longer lists, one in
// stockUnknownEvery, is a 404.
func handleStock(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("sku"))
	w.Header().Set("Content-Type", "text/plain")
	if id%stockUnknownEvery == 0 {
		http.Error(w, "no such product", http.StatusNotFound)
		return
	}
	io.WriteString(w, strconv.Itoa(id%97))
}
