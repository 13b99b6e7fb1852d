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

func httpClientLeak() Scenario {
	return Scenario{
		Name: "http-client-leak",
		Story: "A pricing front end asks a quotes backend for every product it prices, with " +
			"client.Get and no context, through a transport limited to 16 connections to the " +
			"backend (MaxConnsPerHost, to protect it). The backend sheds load: one call in three gets " +
			"a 503, and on that path fetchQuote returns its error early without closing the " +
			"response body. An unclosed body pins its connection: the transport can neither reuse " +
			"nor close it, and its readLoop and writeLoop goroutines wait for ever. After 16 shed " +
			"calls the pool is exhausted, and every later fetchQuote blocks for ever waiting for a " +
			"connection, holding its request's goroutine: clients give up after a second, but the " +
			"handler goroutines stay, about 40 a second. The fix is defer resp.Body.Close() right " +
			"after the error check of Get, on every path, and a context or client timeout on the " +
			"call, so that nothing can wait for ever.",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*quoteClient).fetchQuote",
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runHTTPClientLeak,
	}
}

const (
	quoteRequests      = 40 // per second
	quoteShedEvery     = 3  // the backend sheds one call in this many
	quotePool          = 16 // the transport's MaxConnsPerHost
	quoteClientTimeout = time.Second
	quoteBlockedLabCap = 8000 // lab safety valve: past it handlePrice stops calling the backend
)

func runHTTPClientLeak(ctx context.Context, env Env) error {
	q := &quoteClient{}
	b := &quoteBackend{}
	return serve(ctx, env, service{
		name: "http-client-leak",
		routes: map[string]http.HandlerFunc{
			"GET /price/{id}":  q.handlePrice,
			"GET /quotes/{id}": b.handleQuote,
		},
		listening: func(self *client) {
			q.backend = newClient(self.base, quotePool, 0)
			q.backend.tr.MaxConnsPerHost = quotePool
		},
		stopping: q.close,
		loads: []load{{workers: 48, every: time.Second / quoteRequests, send: func(ctx context.Context, c *client, _ int) error {
			// The front end's clients give up after a while.
			ctx, cancel := context.WithTimeout(ctx, quoteClientTimeout)
			defer cancel()
			id := strconv.FormatInt(c.requests.Load()%10000, 10)
			if err := c.send(ctx, call{method: http.MethodGet, path: "/price/" + id}); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		}}},
	})
}

// quoteClient is the pricing front end's client of the quotes backend.
type quoteClient struct {
	backend *client

	// Lab bookkeeping, not part of the bug: unclosed records the bodies
	// fetchQuote left open and waiting counts the calls in flight, so that
	// close can release everything when the scenario stops and a test
	// process gets its goroutines and connections back. The production code
	// had no such list.
	mu       sync.Mutex
	unclosed []io.Closer
	stopped  bool
	waiting  int
}

func (q *quoteClient) handlePrice(w http.ResponseWriter, r *http.Request) {
	cents := 999 // the list price, shown when no quote is available
	if q.enter() {
		if c, err := q.fetchQuote(r.PathValue("id")); err == nil {
			cents = c
		}
		q.leave()
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.Itoa(cents))
}

// fetchQuote asks the backend for a product's price. The bug: the early
// return on a non-200 status leaves the body open. Once the pool is
// exhausted, the leaked goroutines block here, in Get.
func (q *quoteClient) fetchQuote(id string) (int, error) {
	resp, err := q.backend.hc.Get(q.backend.base + "/quotes/" + id)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		if !q.leaked(resp.Body) {
			resp.Body.Close() // the scenario is stopping
		}
		return 0, fmt.Errorf("quotes backend: %s", resp.Status)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(body))
}

// enter counts a call to the backend; it refuses past the lab cap or once
// the scenario stops.
func (q *quoteClient) enter() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped || q.waiting >= quoteBlockedLabCap {
		return false
	}
	q.waiting++
	return true
}

func (q *quoteClient) leave() {
	q.mu.Lock()
	q.waiting--
	q.mu.Unlock()
}

// leaked records a body left open, unless the scenario is stopping.
func (q *quoteClient) leaked(body io.Closer) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false
	}
	q.unclosed = append(q.unclosed, body)
	return true
}

// close closes the bodies left open, which frees their connections for the
// calls blocked in Get, and makes later calls close theirs (lab
// bookkeeping, see unclosed).
func (q *quoteClient) close() {
	q.mu.Lock()
	q.stopped = true
	unclosed := q.unclosed
	q.unclosed = nil
	q.mu.Unlock()
	for _, b := range unclosed {
		b.Close()
	}
	// Wait for the blocked calls to finish, then drop the connections.
	for deadline := time.Now().Add(shutdownTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		q.mu.Lock()
		n := q.waiting
		q.mu.Unlock()
		if n == 0 {
			break
		}
	}
	if q.backend != nil {
		q.backend.close()
	}
}

// quoteBackend answers quotes and sheds one call in quoteShedEvery.
type quoteBackend struct {
	mu    sync.Mutex
	calls int
}

func (b *quoteBackend) handleQuote(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.calls++
	shed := b.calls%quoteShedEvery == 0
	b.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	if shed {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "overloaded, retry later\n")
		return
	}
	id, _ := strconv.Atoi(r.PathValue("id"))
	io.WriteString(w, strconv.Itoa(100+id%900))
}
