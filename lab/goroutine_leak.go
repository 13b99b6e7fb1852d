package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func goroutineLeak() Scenario {
	return Scenario{
		Name: "goroutine-leak",
		Story: "A search front end fans each query out to four shard backends over HTTP, one " +
			"goroutine per shard, and collects the answers from an unbuffered channel until a " +
			"50 ms deadline, then answers with what it has. One shard replica is slow. After " +
			"the deadline nobody reads the channel any more, so the goroutine of the slow shard " +
			"blocks forever on its send, keeping its stack and everything it references: tens " +
			"of goroutines leak per second and memory creeps up with them. The fix is a channel " +
			"buffered for every shard (or a select on the request's context around the send), " +
			"so that late answers are dropped instead of blocking.",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*searchService).queryShard",
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runGoroutineLeak,
	}
}

const (
	searchShards    = 4
	searchDeadline  = 50 * time.Millisecond
	slowShardDelay  = 120 * time.Millisecond
	maxLeakedLabCap = 20000 // lab safety valve: past it the front end stops leaking
)

func runGoroutineLeak(ctx context.Context, env Env) error {
	s := &searchService{}
	defer s.close()
	return serve(ctx, env, service{
		name: "goroutine-leak",
		routes: map[string]http.HandlerFunc{
			"GET /search":        s.handleSearch,
			"GET /shard/{shard}": handleShard,
		},
		// The shard backends are served by the same loopback server.
		listening: func(self *client) { s.backend = self },
		loads: []load{{
			workers: 4,
			every:   time.Second / 30,
			send: func(ctx context.Context, c *client, w int) error {
				return c.send(ctx, call{method: http.MethodGet, path: "/search?q=shoes"})
			},
		}},
	})
}

type shardResult struct {
	shard int
	hits  int
	err   error
}

// searchService is the fan-out front end.
type searchService struct {
	backend *client
	leaked  atomic.Int64

	// abandoned records the channels whose senders were left blocked. It is
	// lab bookkeeping, not part of the bug: it lets close unblock the
	// leaked goroutines when the scenario stops, so that a test process
	// gets them back. The production code had no such list.
	mu        sync.Mutex
	abandoned []abandonedFanOut
}

type abandonedFanOut struct {
	results chan shardResult
	pending int
}

func (s *searchService) handleSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	hits, answered := s.fanOut(r.Context(), q)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%d hits from %d of %d shards\n", hits, answered, searchShards)
}

// fanOut queries every shard in its own goroutine and waits for the answers
// until the deadline. The bug: results is unbuffered, so the goroutines
// still running at the deadline block on their send forever.
func (s *searchService) fanOut(ctx context.Context, q string) (hits, answered int) {
	results := make(chan shardResult)
	for shard := range searchShards {
		go s.queryShard(ctx, shard, q, results)
	}
	deadline := time.NewTimer(searchDeadline)
	defer deadline.Stop()
	if s.leaked.Load() >= maxLeakedLabCap {
		deadline.Stop() // lab cap reached: wait for every shard
	}
	for answered < searchShards {
		select {
		case res := <-results:
			answered++
			hits += res.hits
		case <-deadline.C:
			s.abandon(results, searchShards-answered)
			return hits, answered
		}
	}
	return hits, answered
}

// queryShard asks one shard and sends the answer (or the error) on results.
// The leaked goroutines are blocked here, on the send.
func (s *searchService) queryShard(ctx context.Context, shard int, q string, results chan<- shardResult) {
	hits, err := s.callShard(ctx, shard, q)
	if err != nil {
		results <- shardResult{shard: shard, err: err}
		return
	}
	results <- shardResult{shard: shard, hits: hits}
}

func (s *searchService) callShard(ctx context.Context, shard int, q string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.backend.base+"/shard/"+strconv.Itoa(shard)+"?q="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.backend.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(body))
}

func (s *searchService) abandon(results chan shardResult, pending int) {
	s.leaked.Add(int64(pending))
	s.mu.Lock()
	s.abandoned = append(s.abandoned, abandonedFanOut{results, pending})
	s.mu.Unlock()
}

// close receives the answers nobody waited for, which lets the leaked
// goroutines finish (lab bookkeeping, see abandoned).
func (s *searchService) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.abandoned {
		for range a.pending {
			<-a.results
		}
	}
	s.abandoned = nil
	s.leaked.Store(0)
}

// handleShard is a shard backend; shard 3 is the slow replica.
func handleShard(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("shard") == "3" {
		t := time.NewTimer(slowShardDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "7")
}
