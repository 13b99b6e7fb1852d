package lab

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func subscriberFlood() Scenario {
	return Scenario{
		Name: "subscriber-flood",
		Story: "A push gateway keeps one goroutine per subscriber, parked on the subscriber's " +
			"channel until it closes: 100,000 of them at start, the devices connected. " +
			"Unsubscribing removes the subscriber from the topic but never closes its channel, " +
			"so every unsubscribed device leaves its goroutine parked for ever (holding little but " +
			"its subscription): about 800 a second. At this count each goroutine profile is a large " +
			"request for the service: the runtime records every goroutine's stack into buffers " +
			"of tens of MiB, which a GC running meanwhile finds in use, and which grow with the " +
			"goroutines, so the observer's own reads look like a leak of runtime/pprof. The fix " +
			"is to close the subscriber's channel when it unsubscribes (or select on a done " +
			"channel in the delivery loop).",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*pushGateway).deliver",
			Allowed:  []string{kindHeapLeak}, // the leaked subscriptions grow the heap
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Watch:    8 * time.Second,
			Interval: time.Second,
		},
		Run: runSubscriberFlood,
	}
}

const (
	floodSubscribers  = 100000 // connected at start
	floodLeakPerSec   = 800    // short sessions, each leaking one goroutine
	floodLabCap       = 250000 // lab safety valve: past it unsubscribe closes the channel
	floodChurnWorkers = 4
)

func runSubscriberFlood(ctx context.Context, env Env) error {
	gw := &pushGateway{subs: map[int64]*subscriber{}}
	for range floodSubscribers {
		gw.subscribe()
	}
	defer gw.close()
	return serve(ctx, env, service{
		name: "subscriber-flood",
		routes: map[string]http.HandlerFunc{
			"POST /devices/{id}/subscribe": gw.handleChurn,
		},
		loads: []load{{workers: floodChurnWorkers, every: time.Second / floodLeakPerSec, burst: 4, send: func(ctx context.Context, c *client, _ int) error {
			id := strconv.FormatInt(c.requests.Load(), 10)
			return c.send(ctx, call{method: http.MethodPost, path: "/devices/" + id + "/subscribe"})
		}}},
	})
}

// subscriber is one device's subscription: its delivery goroutine waits on ch.
type subscriber struct {
	id int64
	ch chan []byte
}

// pushGateway delivers messages to its subscribers.
type pushGateway struct {
	next      atomic.Int64
	delivered atomic.Int64

	mu   sync.Mutex
	subs map[int64]*subscriber
	// Lab bookkeeping, not part of the bug: gone records the unsubscribed subscribers whose
	// channel was never closed, so that close can end their goroutines when the scenario
	// stops, and caps them (floodLabCap). The production code had no such list.
	gone    []*subscriber
	stopped bool
}

// handleChurn is a device's short session: it subscribes, and unsubscribes as it goes.
func (gw *pushGateway) handleChurn(w http.ResponseWriter, r *http.Request) {
	s := gw.subscribe()
	gw.unsubscribe(s)
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok\n"))
}

func (gw *pushGateway) subscribe() *subscriber {
	s := &subscriber{id: gw.next.Add(1), ch: make(chan []byte)}
	gw.mu.Lock()
	gw.subs[s.id] = s
	gw.mu.Unlock()
	go gw.deliver(s)
	return s
}

// deliver sends a subscriber's messages as they come, until its channel is closed.
func (gw *pushGateway) deliver(s *subscriber) {
	for msg := range s.ch {
		gw.delivered.Add(int64(len(msg)))
	}
}

// unsubscribe removes a subscriber from the gateway. The bug: its channel is never closed, so
// its deliver goroutine stays parked, holding the outbox.
func (gw *pushGateway) unsubscribe(s *subscriber) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	delete(gw.subs, s.id)
	if gw.stopped || len(gw.gone) >= floodLabCap {
		close(s.ch)
		return
	}
	gw.gone = append(gw.gone, s)
}

// close ends every delivery goroutine (lab bookkeeping).
func (gw *pushGateway) close() {
	gw.mu.Lock()
	gw.stopped = true
	gone, subs := gw.gone, gw.subs
	gw.gone, gw.subs = nil, map[int64]*subscriber{}
	gw.mu.Unlock()
	for _, s := range gone {
		close(s.ch)
	}
	for _, s := range subs {
		close(s.ch)
	}
}
