package kernels

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rangeDesc is a range of an index's keys, read from the node that holds it: a round trip,
// then the scan.
type rangeDesc struct {
	startKey, keys int
	rtt            time.Duration
}

func (r rangeDesc) scan() int {
	time.Sleep(r.rtt)
	n := 0
	for k := range r.keys {
		n += (r.startKey + k) & 7
	}
	return n
}

// distSender sends a query with a limit to every range at once and returns as soon as it has
// its rows; the other ranges' answers go to a channel buffered for the ranges its cache knew,
// less the rows read. The cache is stale by the ranges split since: that many senders block on
// the full channel for good.
type distSender struct {
	ranges []rangeDesc
	stale  int
}

func (ds *distSender) sendWithLimit(limit int) []int {
	rows := make(chan int, len(ds.ranges)-ds.stale-limit)
	for _, r := range ds.ranges {
		go func() { rows <- r.scan() }()
	}
	out := make([]int, 0, limit)
	for len(out) < limit {
		out = append(out, <-rows)
	}
	return out
}

// Family 3: a call that starts a thousand goroutines, about 25 of which never end, most of the
// rest still running when it returns.
func TestCockroachLimitedScan(t *testing.T) {
	ds := &distSender{stale: 25}
	for i := range 1000 {
		ds.ranges = append(ds.ranges, rangeDesc{startKey: i * 64, keys: 100 + 53*i%1500, rtt: time.Duration(300+7919*i%40000) * time.Microsecond})
	}
	run(t, kernel{
		family: "3", fn: func() { ds.sendWithLimit(100) },
		own: "example.com/kernels.(*distSender).sendWithLimit.func1", file: "cockroach_test.go",
		def: "go func() { rows <- r.scan() }()", goStmt: "go func() { rows <- r.scan() }()",
	})
}

// stopper runs async tasks; a task drains its replica's pending proposals, waiting for each
// to be acknowledged. A proposal that fails is counted twice in the wait group and acknowledged
// once: the drain waits for good.
type stopper struct{ tasks atomic.Int64 }

func (s *stopper) runAsyncTask(f func()) {
	s.tasks.Add(1)
	go func() { // the task
		defer s.tasks.Add(-1)
		f()
	}()
}

func drainProposals(n int, failed int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		if i == failed {
			wg.Add(1) // the bug: the retry is counted but never runs
		}
		go wg.Done()
	}
	wg.Wait()
}

// A drain with one failed proposal: the task waits in the wait group for good.
func TestCockroachDrainWaitGroup(t *testing.T) {
	s := &stopper{}
	run(t, kernel{
		family: "4", fn: func() { s.runAsyncTask(func() { drainProposals(4, 2) }) },
		own: "example.com/kernels.(*stopper).runAsyncTask.func1", file: "cockroach_test.go",
		def: "go func() { // the task", goStmt: "go func() { // the task",
	})
}

// replica applies commands under its mutex; a command that fails returns without unlocking,
// and the flush it started waits for the lock for good.
type replica struct {
	mu      sync.Mutex
	applied int
}

func (r *replica) apply(fail bool) {
	r.mu.Lock()
	go r.flush()
	if fail {
		return // the bug: r.mu.Unlock() is missing on this path
	}
	r.applied++
	r.mu.Unlock()
}

func (r *replica) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied = 0
}

// A command that fails on a fresh replica: its flusher waits for the mutex for good.
func TestCockroachLockNotReleased(t *testing.T) {
	run(t, kernel{
		fn:  func() { (&replica{}).apply(true) },
		own: "example.com/kernels.(*replica).flush", file: "cockroach_test.go",
		def: "func (r *replica) flush() {", goStmt: "go r.flush()",
	})
}

// heartbeat waits for its liveness record's channel, which the code that should have made it
// left nil: a receive on a nil channel waits for good.
type liveness struct{ updated chan struct{} }

func (l *liveness) startHeartbeat() {
	go func() { <-l.updated }() // the bug: updated was never made
}

// A liveness record whose channel was never made.
func TestCockroachNilChannel(t *testing.T) {
	run(t, kernel{
		fn:  func() { (&liveness{}).startHeartbeat() },
		own: "example.com/kernels.(*liveness).startHeartbeat.func1", file: "cockroach_test.go",
		def: "go func() { <-l.updated }()", goStmt: "go func() { <-l.updated }()",
	})
}
