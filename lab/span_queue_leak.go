package lab

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func spanQueueLeak() Scenario {
	return Scenario{
		Name: "span-queue-leak",
		Story: "An order API records a tracing span for every request and hands it to its exporter, " +
			"which sends batches to a collector. The collector's address was changed and the " +
			"exporter's retry queue has no bound: every span (about 7 KiB of attributes: the " +
			"route, the headers, the SQL of each query) stays queued for a retry that never " +
			"succeeds. At 100 requests a second that is a steady 0.7 MB a second, while each " +
			"request itself makes only a couple of MB a second of garbage: the GC, which waits for " +
			"the heap to double, runs every 12 s or so once the heap is 40 MB, and reads the live " +
			"heap only then. A watch attached to the service a minute after its start sees a live " +
			"heap that climbs, measured once every 12 s. The fix is a bounded queue that drops the " +
			"oldest spans (and a metric that says so).",
		Expect: Expect{
			Kinds:    []string{kindHeapLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*spanExporter).record",
			Absent:   []string{kindGoroutineLeak, kindTransientSpike, kindNonGoMemory},
			Watch:    24 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runSpanQueueLeak,
	}
}

const (
	spanRequests  = 100      // a second
	spanAttrs     = 48       // attributes a span carries
	spanAttrBytes = 150      // about, each: 7 KiB a span
	spanGarbage   = 20 << 10 // bytes of garbage a request makes (its response)
	spanLabCap    = 1 << 30  // lab safety valve: past it spans are dropped
)

func runSpanQueueLeak(ctx context.Context, env Env) error {
	x := &spanExporter{}
	return serve(ctx, env, service{
		name:   "span-queue-leak",
		routes: map[string]http.HandlerFunc{"GET /orders/{id}": x.handleOrder},
		loads: []load{{workers: 2, every: time.Second / spanRequests, send: func(ctx context.Context, c *client, _ int) error {
			return c.send(ctx, call{method: http.MethodGet, path: "/orders/" + strconv.FormatInt(c.requests.Load(), 10)})
		}}},
	})
}

// span is one finished span waiting to be exported.
type span struct {
	name  string
	start time.Time
	attrs []spanAttr
}

type spanAttr struct{ key, value string }

// spanExporter queues spans for a collector that never answers. The bug: the retry queue has
// no bound.
type spanExporter struct {
	mu    sync.Mutex
	queue []*span
	bytes int
}

func (x *spanExporter) handleOrder(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.PathValue("id")
	body := make([]byte, spanGarbage) // the response, rendered
	n := copy(body, `{"order":"`)
	n += copy(body[n:], id)
	copy(body[n:], `","status":"shipped"}`)
	w.Header().Set("Content-Type", "application/json")
	w.Write(body[:n+21])
	x.record(r, id, start)
}

// record builds the request's span and queues it for export, where it stays.
func (x *spanExporter) record(r *http.Request, id string, start time.Time) {
	s := &span{name: "GET /orders/{id}", start: start, attrs: make([]spanAttr, 0, spanAttrs)}
	for i := range spanAttrs {
		s.attrs = append(s.attrs, spanAttr{
			key:   "db.statement." + strconv.Itoa(i),
			value: fmt.Sprintf("SELECT * FROM order_lines WHERE order_id = %s AND line = %d AND tenant = '%s' -- %s", id, i, r.Host, r.UserAgent()),
		})
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.bytes < spanLabCap {
		x.queue = append(x.queue, s)
		x.bytes += spanAttrs * spanAttrBytes
	}
}
