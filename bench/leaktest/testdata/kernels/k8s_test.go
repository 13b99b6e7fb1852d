package kernels

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jitterUntil calls f again and again until stop is closed, period apart, as kubernetes'
// wait.JitterUntil does: a period of zero calls it back to back.
func jitterUntil(f func(), period time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		f()
		if period > 0 {
			select {
			case <-stop:
				return
			case <-time.After(period):
			}
		}
	}
}

// reflector relists a resource into its store whenever its resync loop asks, until stopped.
type reflector struct {
	resyncPeriod time.Duration
	stop         chan struct{}
	queued       chan string
	relisted     atomic.Int64
}

func (r *reflector) run() { go jitterUntil(r.resync, r.resyncPeriod, r.stop) }

func (r *reflector) resync() {
	select {
	case key := <-r.queued:
		r.relisted.Add(int64(len(key)))
	default:
	}
}

// syncNamespace lists a namespace through a reflector; the list is forbidden, and the error
// path forgets to stop the reflector, whose resync loop (period zero: the configuration left
// it out) spins for good.
func syncNamespace(ns string) error {
	r := &reflector{stop: make(chan struct{}), queued: make(chan string, 1)}
	r.run()
	r.queued <- ns
	if ns != "" {
		return errForbidden // the bug: close(r.stop) is missing here
	}
	close(r.stop)
	return nil
}

type forbidden struct{}

func (forbidden) Error() string { return "namespaces is forbidden" }

var errForbidden error = forbidden{}

// Family 1: a leaked goroutine that spins.
func TestKubernetesSpinningReflector(t *testing.T) {
	run(t, kernel{
		family: "1", fn: func() { syncNamespace("kube-system") },
		own: "example.com/kernels.jitterUntil", file: "k8s_test.go",
		def: "func jitterUntil(", goStmt: "go jitterUntil(r.resync, r.resyncPeriod, r.stop)",
	})
}

// queue is a work queue: get waits for an item until the queue shuts down.
type queue struct {
	mu           sync.Mutex
	cond         *sync.Cond
	items        []string
	shuttingDown bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) add(item string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, item)
	q.cond.Signal()
}

func (q *queue) get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return "", false
	}
	item := q.items[0]
	q.items = q.items[1:]
	return item, true
}

// controller syncs the keys of its queue on a worker.
type controller struct {
	queue  *queue
	synced atomic.Int64
}

func (c *controller) runWorker() {
	for c.processNextItem() {
	}
}

func (c *controller) processNextItem() bool {
	key, ok := c.queue.get()
	if !ok {
		return false
	}
	c.synced.Add(int64(len(key)))
	return true
}

// A controller started for one key, whose queue is never shut down: its worker waits in the
// queue's get for good.
func TestKubernetesQueueNotShutDown(t *testing.T) {
	run(t, kernel{
		family: "4",
		fn: func() {
			c := &controller{queue: newQueue()}
			go c.runWorker()
			c.queue.add("default/web-0")
		},
		own: "example.com/kernels.(*controller).runWorker", file: "k8s_test.go",
		def: "func (c *controller) runWorker() {", goStmt: "go c.runWorker()",
	})
}

// podWorker waits for its pod's containers to start, polling, until the pod is started or
// the worker is told to stop; a pod deleted before it started is never either.
type podWorker struct {
	started atomic.Bool
	stopped atomic.Bool
}

func (w *podWorker) waitForStart() {
	go func() { // the poller
		for !w.started.Load() && !w.stopped.Load() {
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

// A pod deleted before its containers started, its worker not stopped: the poll goes on.
func TestKubernetesPollingPodWorker(t *testing.T) {
	run(t, kernel{
		fn:  func() { (&podWorker{}).waitForStart() },
		own: "example.com/kernels.(*podWorker).waitForStart.func1", file: "k8s_test.go",
		def: "go func() { // the poller", goStmt: "go func() { // the poller",
	})
}

// portForwarder copies a stream's data to the pod through a pipe, each direction on a
// goroutine of its own; an error on the stream closes one direction, never the other.
type portForwarder struct{ copied atomic.Int64 }

func (p *portForwarder) forward(data string) {
	podIn, toPod := io.Pipe()
	go func() { // the pod side
		n, _ := io.Copy(io.Discard, podIn)
		p.copied.Add(n)
	}()
	go func() {
		io.Copy(toPod, strings.NewReader(data))
		// the bug: toPod.Close() is missing, so the pod side's copy never sees EOF
	}()
}

// A port forwarded for one request: the pod side's copy waits on the pipe for good.
func TestKubernetesPortForward(t *testing.T) {
	run(t, kernel{
		family: "4", fn: func() { (&portForwarder{}).forward("GET / HTTP/1.1\r\n\r\n") },
		own: "example.com/kernels.(*portForwarder).forward.func1", file: "k8s_test.go",
		def: "go func() { // the pod side", goStmt: "go func() { // the pod side",
	})
}
