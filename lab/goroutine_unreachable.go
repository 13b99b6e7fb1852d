package lab

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

func goroutineUnreachable() Scenario {
	return Scenario{
		Name: "goroutine-unreachable",
		Story: "A dashboard service renders each report in a goroutine of its own and waits for " +
			"the result on an unbuffered channel for at most 100 ms; past that it answers \"still " +
			"rendering, retry\" and returns, dropping its only reference to the channel. One " +
			"report in five takes 150 ms. Its goroutine finishes the render and then blocks for " +
			"ever on the send to a channel that nothing else can reach, holding its stack and the " +
			"16 KiB report: about a dozen goroutines leak a second. Because the channel is " +
			"unreachable, this is the case the runtime proves by itself: Go 1.27's goroutineleak " +
			"profile (Go 1.26 built with GOEXPERIMENT=goroutineleakprofile) lists these goroutines " +
			"from a single snapshot at /debug/pprof/goroutineleak. Without it, the goroutine count " +
			"climbs steadily. The fix is a channel buffered for the one result (make(chan " +
			"[]byte, 1)), so that a late render can always send and end.",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*dashboardService).render",
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Go127:    true,
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runGoroutineUnreachable,
	}
}

const (
	dashboardRequests = 60 // per second
	renderWait        = 100 * time.Millisecond
	renderFast        = 20 * time.Millisecond
	renderSlow        = 150 * time.Millisecond // one render in renderSlowEvery
	renderSlowEvery   = 5
	reportBytes       = 16 << 10
	unreachableLabCap = 20000 // lab safety valve: past it the handler waits for every render
)

func runGoroutineUnreachable(ctx context.Context, env Env) error {
	s := &dashboardService{}
	defer s.close()
	return serve(ctx, env, service{
		name:   "goroutine-unreachable",
		routes: map[string]http.HandlerFunc{"GET /dashboards/{id}": s.handleDashboard},
		loads: []load{{workers: 8, every: time.Second / dashboardRequests, send: func(ctx context.Context, c *client, _ int) error {
			id := strconv.FormatInt(c.requests.Load()%500, 10)
			return c.send(ctx, call{method: http.MethodGet, path: "/dashboards/" + id})
		}}},
	})
}

// dashboardService renders dashboards.
type dashboardService struct {
	renders atomic.Int64

	// abandoned records, through weak pointers, the renders whose handler
	// gave up. It is lab bookkeeping, not part of the bug: a weak pointer
	// does not keep the channel reachable, so the runtime's leak detection
	// still sees what the production code left, while close can unblock the
	// goroutines when the scenario stops, so that a test process gets them
	// back.
	mu        sync.Mutex
	abandoned []weak.Pointer[pendingRender]
}

// pendingRender is the handler's side of one render: the channel the result
// comes back on.
type pendingRender struct {
	result chan []byte
	sent   bool // set by the render after its send
}

func (s *dashboardService) handleDashboard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p := &pendingRender{result: make(chan []byte)} // the bug: no room for a late result
	go s.render(id, p)
	wait := time.NewTimer(renderWait)
	defer wait.Stop()
	if s.abandonedCount() >= unreachableLabCap {
		wait.Stop() // lab cap reached: wait for every render
	}
	select {
	case report := <-p.result:
		w.Header().Set("Content-Type", "text/plain")
		w.Write(report)
	case <-wait.C:
		s.abandon(p)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "still rendering, retry", http.StatusAccepted)
	}
}

// render renders a report and sends it back. The goroutines of the renders
// nobody waits for any more stay blocked here, on the send.
func (s *dashboardService) render(id string, p *pendingRender) {
	n := s.renders.Add(1)
	delay := renderFast
	if n%renderSlowEvery == 0 {
		delay = renderSlow // a slow query
	}
	time.Sleep(delay)
	report := make([]byte, 0, reportBytes)
	report = fmt.Appendf(report, "dashboard %s\n", id)
	for i := 0; len(report) < reportBytes-48; i++ {
		report = fmt.Appendf(report, "panel %d: %d requests\n", i, (n+int64(i))%1000)
	}
	p.result <- report
	p.sent = true
}

func (s *dashboardService) abandon(p *pendingRender) {
	s.mu.Lock()
	s.abandoned = append(s.abandoned, weak.Make(p))
	s.mu.Unlock()
}

func (s *dashboardService) abandonedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.abandoned)
}

// close receives the results nobody waited for, which lets the leaked
// goroutines end (lab bookkeeping, see abandoned). A render still running
// sends within renderSlow.
//
// Waking a goroutine that the runtime's leak detection has marked leaked is
// fatal ("bad g->status in ready", Go 1.26 with the experiment and Go
// 1.27.0), and a weak pointer is exactly what can reach one. So close first
// makes every abandoned channel reachable again (strong references), then,
// where the runtime has leak detection, runs one detection cycle: it resets
// the goroutines it had marked, and finds none leaked now. Only then does it
// receive.
func (s *dashboardService) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := make([]*pendingRender, 0, len(s.abandoned))
	for _, wp := range s.abandoned {
		if p := wp.Value(); p != nil { // nil: the render ended and nothing holds it any more
			pending = append(pending, p)
		}
	}
	s.abandoned = nil
	if len(pending) > 0 {
		detectLeaks()
	}
	for _, p := range pending {
		select {
		case <-p.result:
		case <-time.After(10 * renderSlow):
		}
	}
	runtime.KeepAlive(pending)
}
