package lab

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func webhookLeak() Scenario {
	return Scenario{
		Name: "webhook-leak",
		Story: "A notification service delivers each event to the customer's webhook from a " +
			"goroutine of its own and waits for the outcome 100 ms, then answers \"accepted\" and " +
			"moves on. The outcome goes back on an unbuffered channel: when the webhook is slower " +
			"than that (about one call in fourteen), nobody is left to receive it, and the " +
			"delivery goroutine blocks on its send for ever. At eight events a second that is one " +
			"goroutine every two seconds, on a service of ten: 10 -> 36 in 45 s, each holding its " +
			"stack and its event, steady and small, and never bounded. The fix is a channel " +
			"buffered for the one outcome (or a select on the request's context around the send).",
		Expect: Expect{
			Kinds:   []string{kindGoroutineLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*notifier).deliver",
			Absent:  []string{kindHeapLeak, kindTransientSpike, kindNonGoMemory},
			// About 0.55 goroutines a second: the 30 a growth must add to matter take about 50 s.
			Confirm:  time.Minute,
			Watch:    45 * time.Second,
			Interval: 5 * time.Second,
		},
		Run: runWebhookLeak,
	}
}

const (
	webhookEvents   = 8                      // a second
	webhookSlowEach = 14                     // one call in this many is slower than the wait
	webhookWait     = 100 * time.Millisecond // how long a delivery's outcome is waited for
	webhookSlow     = 250 * time.Millisecond // how long the slow webhook takes
	webhookLabCap   = 20000                  // lab safety valve: past it deliveries are waited for
)

func runWebhookLeak(ctx context.Context, env Env) error {
	n := &notifier{}
	defer n.close()
	return serve(ctx, env, service{
		name: "webhook-leak",
		routes: map[string]http.HandlerFunc{
			"POST /events":  n.handleEvent,
			"POST /webhook": handleWebhook,
		},
		// The customers' webhook is served by the same loopback server.
		listening: func(self *client) { n.hook = self },
		loads: []load{{workers: 2, every: time.Second / webhookEvents, send: func(ctx context.Context, c *client, _ int) error {
			return c.send(ctx, call{method: http.MethodPost, path: fmt.Sprintf("/events?seq=%d", c.requests.Load())})
		}}},
	})
}

// notifier delivers events to the webhook.
type notifier struct {
	hook   *client
	calls  atomic.Int64
	leaked atomic.Int64

	// abandoned are the outcome channels nobody receives from: lab bookkeeping that lets
	// close release the blocked goroutines when the scenario stops. The service had none.
	mu        sync.Mutex
	abandoned []chan error
}

type webhookEvent struct {
	Seq     string
	Payload [512]byte
}

func (n *notifier) handleEvent(w http.ResponseWriter, r *http.Request) {
	ev := &webhookEvent{Seq: r.URL.Query().Get("seq")}
	outcome := make(chan error) // the bug: unbuffered
	slow := n.calls.Add(1)%webhookSlowEach == 0
	go n.deliver(ev, slow, outcome)
	wait := time.NewTimer(webhookWait)
	defer wait.Stop()
	if n.leaked.Load() >= webhookLabCap {
		wait.Stop() // lab cap reached: wait for every delivery
	}
	select {
	case err := <-outcome:
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	case <-wait.C:
		n.leaked.Add(1)
		n.mu.Lock()
		n.abandoned = append(n.abandoned, outcome)
		n.mu.Unlock()
	}
	w.WriteHeader(http.StatusAccepted)
}

// deliver posts one event to the webhook and sends the outcome. A leaked goroutine is
// blocked here, on the send.
func (n *notifier) deliver(ev *webhookEvent, slow bool, outcome chan<- error) {
	path := "/webhook"
	if slow {
		path += "?slow=1"
	}
	err := n.hook.send(context.Background(), call{method: http.MethodPost, path: path})
	outcome <- err
	runtime.KeepAlive(ev) // the event stays reachable from the blocked goroutine
}

// close receives the outcomes nobody waited for (lab bookkeeping, see abandoned).
func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ch := range n.abandoned {
		<-ch
	}
	n.abandoned = nil
}

// handleWebhook is the customer's webhook: slow when asked.
func handleWebhook(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("slow") != "" {
		t := time.NewTimer(webhookSlow)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
