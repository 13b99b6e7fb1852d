package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func costClimb() Scenario {
	return Scenario{
		Name: "cost-climb",
		Story: "An alert notifier forwards each alert it receives to a webhook. The webhook " +
			"fails (it answers 500 for good), and the notifier keeps every alert it could not " +
			"deliver in a backlog; on each new alert it retries the whole backlog, serialized " +
			"into one JSON batch. The traffic is flat, 20 alerts a second, but every request " +
			"serializes a batch that grew by the alerts before it: within a minute each request " +
			"allocates several times what it did, and the allocation rate climbs with it, while " +
			"the backlog itself holds only a few MiB. The fix is to bound the backlog and back " +
			"off: retry with exponential backoff, drop or aggregate what is too old, and send " +
			"batches of a bounded size.",
		Expect: Expect{
			Kinds:    []string{kindCostGrowth},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*alertNotifier).flush",
			Absent:   []string{kindGoroutineLeak, kindNonGoMemory, kindHeapLeak},
			Allowed:  []string{kindAllocationHotspot, kindGCOverhead},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runCostClimb,
	}
}

const (
	alertsPerSecond = 20
	alertBacklogCap = 20000 // lab safety valve: past it the oldest alerts are dropped
)

func runCostClimb(ctx context.Context, env Env) error {
	n := &alertNotifier{}
	return serve(ctx, env, service{
		name: "cost-climb",
		routes: map[string]http.HandlerFunc{
			"POST /alerts/{id}": n.handleAlert,
			"POST /webhook":     handleFailingWebhook,
		},
		listening: func(self *client) { n.hook = newClient(self.base, 4, 0) },
		stopping:  func() { n.hook.close() },
		loads: []load{{workers: 2, every: time.Second / alertsPerSecond, send: func(ctx context.Context, c *client, _ int) error {
			return c.send(ctx, call{method: http.MethodPost, path: "/alerts/" + strconv.FormatInt(c.requests.Load(), 10)})
		}}},
	})
}

// pendingAlert is an alert the webhook has not accepted yet.
type pendingAlert struct {
	ID       string            `json:"id"`
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"starts_at"`
	Attempts int               `json:"attempts"`
}

// alertNotifier forwards alerts to a webhook, keeping what it could not deliver.
type alertNotifier struct {
	hook    *client
	mu      sync.Mutex
	backlog []pendingAlert
}

func (n *alertNotifier) handleAlert(w http.ResponseWriter, r *http.Request) {
	a := pendingAlert{ID: r.PathValue("id"), StartsAt: time.Now(), Labels: map[string]string{
		"alertname": "DiskFillingUp", "severity": "warning", "instance": "db-" + r.PathValue("id"), "team": "storage",
	}}
	n.mu.Lock()
	n.backlog = append(n.backlog, a)
	if len(n.backlog) > alertBacklogCap {
		n.backlog = n.backlog[len(n.backlog)-alertBacklogCap:]
	}
	n.mu.Unlock()
	n.flush(r.Context())
	io.WriteString(w, "accepted\n")
}

// flush retries the whole backlog as one batch. The bug: the batch is everything not yet
// delivered, serialized again on every alert.
func (n *alertNotifier) flush(ctx context.Context) {
	n.mu.Lock()
	for i := range n.backlog {
		n.backlog[i].Attempts++
	}
	batch, err := json.Marshal(n.backlog)
	n.mu.Unlock()
	if err != nil {
		return
	}
	if n.hook.send(ctx, call{method: http.MethodPost, path: "/webhook", contentType: "application/json", body: bytes.NewReader(batch)}) == nil {
		n.mu.Lock()
		n.backlog = n.backlog[:0]
		n.mu.Unlock()
	}
}

// handleFailingWebhook is the webhook, down for good: it reads the batch and fails.
func handleFailingWebhook(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	http.Error(w, "upstream unavailable", http.StatusInternalServerError)
}
