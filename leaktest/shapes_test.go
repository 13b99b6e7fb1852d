package leaktest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The shapes of goroutine leaks that once fooled Loop (issue 30), each a kernel of a real
// kind of bug: a leaked goroutine that spins, a call that leaves heavy work behind, a count
// read while the call's goroutines still run, and a goroutine that waits in a helper of its
// own function. Each must fail, naming the leaked goroutine's own function; the healthy
// counterparts (healthy_test.go) must pass. bench/leaktest/run.sh measures their wall time on a
// busy machine.

// until calls f again and again until stop is closed, period apart, as kubernetes'
// wait.Until does: a period of zero calls it back to back.
func until(f func(), period time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		f()
		if period <= 0 {
			continue
		}
		t := time.NewTimer(period)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// informer keeps a local copy of a remote list: once started, its resync loop drains the
// updates its watch queued, every resyncPeriod, until it is stopped.
type informer struct {
	resyncPeriod time.Duration // zero when the configuration leaves it out
	updates      chan string
	stop         chan struct{}
	stopOnce     sync.Once
	seen         atomic.Int64
	reg          *informers
}

func (inf *informer) start() { go until(inf.resync, inf.resyncPeriod, inf.stop) }

func (inf *informer) resync() {
	select {
	case u := <-inf.updates:
		inf.seen.Add(int64(len(u)))
	default:
	}
}

func (inf *informer) shutdown() {
	inf.stopOnce.Do(func() {
		close(inf.stop)
		inf.reg.forget(inf)
	})
}

// informers makes informers and remembers those running, so that a test stops those a leak
// left spinning (they would take the CPU from the tests after it).
type informers struct {
	mu      sync.Mutex
	running map[*informer]bool
}

func (r *informers) make() *informer {
	inf := &informer{updates: make(chan string, 1), stop: make(chan struct{}), reg: r}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[*informer]bool{}
	}
	r.running[inf] = true
	return inf
}

func (r *informers) forget(inf *informer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, inf)
}

func (r *informers) shutdown() {
	r.mu.Lock()
	all := make([]*informer, 0, len(r.running))
	for inf := range r.running {
		all = append(all, inf)
	}
	r.mu.Unlock()
	for _, inf := range all {
		inf.shutdown()
	}
}

var errForbidden = fmt.Errorf("namespaces is forbidden")

// listOnce lists a namespace through an informer; when the list fails it returns without
// stopping the informer, whose resync loop (period zero) then spins for good.
func listOnce(reg *informers, allowed bool) error {
	inf := reg.make()
	inf.start()
	inf.updates <- "pods"
	if !allowed {
		return errForbidden // the bug: inf.shutdown() is forgotten on this path
	}
	inf.shutdown()
	return nil
}

// Family 1: a leaked goroutine that spins takes the CPU; Loop stays within its time limit
// and fails it, naming the goroutine's own function.
func TestSpinningGoroutineLeakFails(t *testing.T) {
	reg := &informers{}
	defer reg.shutdown()
	mustFail(t, loop(t, func() { listOnce(reg, false) }),
		"goroutines keep growing", "more goroutines [running]", "the live heap was not judged: the calls left",
		"their function, defined at leaktest/shapes_test.go:"+fmt.Sprint(lineIn(t, "shapes_test.go", "func until(")), "leaktest.until",
		"started by the go statement at leaktest/shapes_test.go:"+fmt.Sprint(lineIn(t, "shapes_test.go", "func (inf *informer) start()")))
}

// follower is one replica of a raft-like group.
type follower struct {
	id  int
	log []uint64
}

// append decodes an entry's records into the follower's log and checksums them: a few dozen
// allocations and thousands of operations.
func (f *follower) append(entry []byte) error {
	var h uint64 = 14695981039346656037
	for i := 0; i+8 <= len(entry); i += 8 {
		rec := make([]byte, 8)
		copy(rec, entry[i:i+8])
		for range 64 {
			for _, c := range rec {
				h = (h ^ uint64(c)) * 1099511628211
			}
		}
	}
	f.log[len(f.log)-1] = h
	return nil
}

// leader replicates each proposal to its followers in the background: one goroutine per
// follower appends the entry and sends its ack, and a collector counts the acks.
type leader struct {
	followers []*follower
	commits   atomic.Int64
	quit      chan struct{} // closed by the test, to end what a leak left
	// everyAck counts every follower's ack; a leader that does not counts one fewer (it
	// takes its own ack for granted, but it is not among its followers), leaving one sender
	// blocked for good per proposal.
	everyAck bool
}

func newLeader(n int, everyAck bool) *leader {
	l := &leader{everyAck: everyAck, quit: make(chan struct{})}
	for i := range n {
		l.followers = append(l.followers, &follower{id: i, log: make([]uint64, 1)})
	}
	return l
}

// propose returns at once: the work is left to the followers' goroutines.
func (l *leader) propose(entry []byte) {
	acks := make(chan error)
	for _, f := range l.followers {
		go func() {
			select {
			case acks <- f.append(entry):
			case <-l.quit:
			}
		}()
	}
	want := len(l.followers)
	if !l.everyAck {
		want--
	}
	go l.collect(acks, want)
}

func (l *leader) collect(acks chan error, want int) {
	for range want {
		if <-acks == nil {
			l.commits.Add(1)
		}
	}
}

// Family 2: a call that returns at once but leaves hundreds of goroutines of heavy work
// behind, one of which never ends: the rounds are sized on what a call costs in all, and the
// leak is confirmed within the time limit.
func TestHeavyWorkLeftBehindLeakFails(t *testing.T) {
	l := newLeader(300, false)
	defer close(l.quit)
	entry := make([]byte, 256)
	mustFail(t, loop(t, func() { l.propose(entry) }),
		"goroutines keep growing", "more goroutines [select]",
		"their function, defined at leaktest/shapes_test.go:"+fmt.Sprint(lineIn(t, "shapes_test.go", "case acks <- f.append(entry):")-2), "leaktest.(*leader).propose.func1")
}

// span is a range of a table's keys, which one scanner reads from the node that holds it: a
// round trip, then the scan.
type span struct {
	start, size int
	rtt         time.Duration
}

func (s span) scan() int {
	time.Sleep(s.rtt)
	n := 0
	for i := range s.size {
		n += (s.start + i) % 7
	}
	return n
}

// keyspace scans its ranges in parallel. A query with a limit returns as soon as it has its
// rows; the other scanners send theirs on a channel buffered for the ranges the planner saw,
// less the rows read. The planner's view is stale by splits ranges: that many scanners block
// on the full channel for good.
type keyspace struct {
	ranges []span
	splits int
	quit   chan struct{} // closed by the test, to end what a leak left
}

func newKeyspace(n, splits int) *keyspace {
	t := &keyspace{splits: splits, quit: make(chan struct{})}
	for i := range n {
		t.ranges = append(t.ranges, span{start: i * 100, size: 200 + 37*i%1800, rtt: time.Duration(500+7919*i%50000) * time.Microsecond})
	}
	return t
}

func (t *keyspace) query(limit int) []int {
	planned := len(t.ranges) - t.splits
	rows := make(chan int, planned-limit)
	for _, s := range t.ranges {
		go func() {
			select {
			case rows <- s.scan():
			case <-t.quit:
			}
		}()
	}
	out := make([]int, 0, limit)
	for len(out) < limit {
		out = append(out, <-rows)
	}
	return out
}

// Family 3: a call that starts a thousand goroutines, of which 25 never end: the count is
// read once the short-lived ones have settled, and the trend is confirmed.
func TestNoisyCountLeakFails(t *testing.T) {
	tbl := newKeyspace(1000, 25)
	defer close(tbl.quit)
	mustFail(t, loop(t, func() { tbl.query(100) }, GoroutinesOnly()),
		"goroutines keep growing", "more goroutines [select]",
		"their function, defined at leaktest/shapes_test.go:"+fmt.Sprint(lineIn(t, "shapes_test.go", "case rows <- s.scan():")-2), "leaktest.(*keyspace).query.func1")
}

// stream carries a container's output to one attached client.
type stream struct {
	frames chan []byte
	done   chan struct{}
	quit   chan struct{}
}

// next waits for the next frame, or for the client to detach.
func (s *stream) next() ([]byte, bool) {
	select {
	case f, ok := <-s.frames:
		return f, ok
	case <-s.done:
		return nil, false
	case <-s.quit:
		return nil, false
	}
}

type container struct {
	attached atomic.Int64
	quit     chan struct{} // closed by the test, to end what a leak left
}

// attach starts copying the container's output to the client until it detaches.
func (c *container) attach(sink func([]byte)) *stream {
	s := &stream{frames: make(chan []byte), done: make(chan struct{}), quit: c.quit}
	c.attached.Add(1)
	go func() {
		defer c.attached.Add(-1)
		for {
			f, ok := s.next()
			if !ok {
				return
			}
			sink(f)
		}
	}()
	return s
}

// Family 4: a goroutine that waits in a helper (stream.next) of its own function (the
// closure attach's go statement starts): the failure names the closure and the line of its
// definition, which a person greps for, not only where it waits.
func TestOwnFunctionNamed(t *testing.T) {
	c := &container{quit: make(chan struct{})}
	defer close(c.quit)
	mustFail(t, loop(t, func() {
		c.attach(func([]byte) {}) // the client hangs up before any frame: nothing closes done
	}, GoroutinesOnly()),
		"more goroutines [select]", "waiting at leaktest/shapes_test.go:", "leaktest.(*stream).next",
		"their function, defined at leaktest/shapes_test.go:"+fmt.Sprint(lineIn(t, "shapes_test.go", "defer c.attached.Add(-1)")-1), "leaktest.(*container).attach.func1")
}
