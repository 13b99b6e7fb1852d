package lab

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

func patternCacheLeak() Scenario {
	return Scenario{
		Name: "pattern-cache-leak",
		Story: "A log search API takes each query's filter as a regular expression and, to stop " +
			"compiling it on every call, keeps every compiled *regexp.Regexp in a map keyed by the " +
			"pattern. The filters come from dashboards that embed what they look for (a request " +
			"ID, a trace ID), so nearly every pattern is new and the map keeps every one ever " +
			"used: about 100 a second of 7 KiB each, held inside package regexp's structures (its " +
			"program, its one-pass machine), a steady 0.7 MB a second in which every live-heap " +
			"reading is higher than the last and one site holds the growth, while each query reads " +
			"the recent log window afresh (19 MB a second of garbage, a GC every few seconds). The fix is a bounded " +
			"cache (an LRU of a few thousand patterns), or compiling one-off patterns per call.",
		Expect: Expect{
			Kinds:   []string{kindHeapLeak},
			Culprit: "github.com/memdoctor/memdoctor/lab.(*patternCache).compile",
			// Compiling allocates several times what it keeps: the top allocating site.
			Allowed:  []string{kindAllocationHotspot, kindGCOverhead},
			Absent:   []string{kindGoroutineLeak, kindNonGoMemory, kindTransientSpike},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runPatternCacheLeak,
	}
}

const (
	patternQueries = 100 // per second, each with a pattern never seen before
	// patternLabCap is the lab's safety valve, not part of the story: past it the cache
	// stops keeping new patterns. At the scenario's rate it is reached after 20 minutes.
	patternLabCap = 120000
)

func runPatternCacheLeak(ctx context.Context, env Env) error {
	pc := &patternCache{compiled: map[string]*regexp.Regexp{}}
	var seq atomic.Uint64
	return serve(ctx, env, service{
		name:   "pattern-cache-leak",
		routes: map[string]http.HandlerFunc{"GET /search": pc.handleSearch},
		loads: []load{{workers: 2, every: time.Second / patternQueries, send: func(ctx context.Context, c *client, w int) error {
			n := seq.Add(1)
			filter := fmt.Sprintf(`(?i)request_id=req-%08x-[0-9a-f]{4}\b.*\b(status|code)=(5\d\d|429)\b.*user=(alice|bob|carol)`, n*7919)
			return c.send(ctx, call{method: http.MethodGet, path: "/search?filter=" + url.QueryEscape(filter)})
		}}},
	})
}

// patternCache keeps every filter it compiled. The bug: nothing ever leaves it.
type patternCache struct {
	mu       sync.Mutex
	compiled map[string]*regexp.Regexp
}

// compile returns the compiled filter, compiling and keeping it the first time.
func (pc *patternCache) compile(filter string) (*regexp.Regexp, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if re, ok := pc.compiled[filter]; ok {
		return re, nil
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		return nil, err
	}
	if len(pc.compiled) < patternLabCap {
		pc.compiled[filter] = re
	}
	return re, nil
}

// searchLog is what the filters run over: the service's recent log, about 192 KiB.
var searchLog = func() []byte {
	var b bytes.Buffer
	users, statuses := []string{"alice", "bob", "carol", "dave"}, []int{200, 200, 200, 201, 404, 429, 503}
	for i := 0; b.Len() < 192<<10; i++ {
		fmt.Fprintf(&b, "ts=2026-11-28T04:%02d:%02dZ level=info request_id=req-%08x-%04x status=%d user=%s path=/orders/%d\n",
			i/60%60, i%60, i*2654435761%(1<<32), i%65536, statuses[i%len(statuses)], users[i%len(users)], i)
	}
	return b.Bytes()
}()

// searchedLines is how many of the window's last lines a query matches.
const searchedLines = 50

func (pc *patternCache) handleSearch(w http.ResponseWriter, r *http.Request) {
	re, err := pc.compile(r.URL.Query().Get("filter"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Each query reads the recent log window afresh, as it would from the log's ring: the
	// service's garbage (19 MB/s at 100 queries a second), which makes the GC run every few
	// seconds and read the live heap each time.
	window := bytes.Clone(searchLog)
	lines := bytes.Split(window[bytes.LastIndexByte(window[:len(window)-1], '\n')-searchedLines*120:], []byte{'\n'})
	hits := 0
	for _, line := range lines {
		if re.Match(line) {
			hits++
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%d\n", hits)
}
