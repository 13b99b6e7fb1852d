package kernels

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// attachStream carries a container's output to one attached client until it detaches.
type attachStream struct {
	frames chan []byte
	detach chan struct{}
}

// next waits for the next frame, or for the client to detach.
func (s *attachStream) next() ([]byte, bool) {
	select {
	case f, ok := <-s.frames:
		return f, ok
	case <-s.detach:
		return nil, false
	}
}

type attachedContainer struct{ written atomic.Int64 }

func (c *attachedContainer) attach() *attachStream {
	s := &attachStream{frames: make(chan []byte), detach: make(chan struct{})}
	go func() { // the copier
		for {
			f, ok := s.next()
			if !ok {
				return
			}
			c.written.Add(int64(len(f)))
		}
	}()
	return s
}

// Family 4: a client that hangs up before any frame, nothing closes detach: the copier waits
// in a helper (next) of its own function, the closure attach starts.
func TestMobyAttachHangUp(t *testing.T) {
	c := &attachedContainer{}
	run(t, kernel{
		family: "4", fn: func() { c.attach() },
		own: "example.com/kernels.(*attachedContainer).attach.func1", file: "moby_test.go",
		def: "go func() { // the copier", goStmt: "go func() { // the copier",
	})
}

type runningContainer struct{ exitCode int }

func (c *runningContainer) wait() int { return c.exitCode }

// waitWithContext waits for the container to exit, or for the context to end; the waiter's
// channel is unbuffered, so once the caller has left, its send blocks for good.
func (c *runningContainer) waitWithContext(ctx context.Context) (int, error) {
	exited := make(chan int)
	go func() { exited <- c.wait() }()
	select {
	case code := <-exited:
		return code, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// A wait whose client went away first.
func TestMobyWaitCancelled(t *testing.T) {
	c := &runningContainer{}
	run(t, kernel{
		fn: func() {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			c.waitWithContext(ctx)
		},
		own: "example.com/kernels.(*runningContainer).waitWithContext.func1", file: "moby_test.go",
		def: "go func() { exited <- c.wait() }()", goStmt: "go func() { exited <- c.wait() }()",
	})
}

// execConfig resizes an exec's terminal on each size its client sends, until the resize
// channel is closed; an exec that ends early never closes it.
type execConfig struct {
	resize chan [2]int
	rows   atomic.Int64
}

func (e *execConfig) start(fail bool) {
	e.resize = make(chan [2]int)
	go func() { // the resizer
		for size := range e.resize {
			e.rows.Store(int64(size[0]))
		}
	}()
	if fail {
		return // the bug: close(e.resize) is on the success path only
	}
	close(e.resize)
}

// An exec whose process fails to start.
func TestMobyExecResize(t *testing.T) {
	run(t, kernel{
		fn:  func() { (&execConfig{}).start(true) },
		own: "example.com/kernels.(*execConfig).start.func1", file: "moby_test.go",
		def: "go func() { // the resizer", goStmt: "go func() { // the resizer",
	})
}

// events broadcasts the daemon's events to its subscribers, each served by a goroutine that
// waits for the next event in a helper; a client that disconnects without unsubscribing stays
// in the list.
type events struct {
	mu   sync.Mutex
	subs []*subscriber
}

type subscriber struct {
	ch   chan string
	sent atomic.Int64
}

func (s *subscriber) nextEvent() (string, bool) {
	ev, ok := <-s.ch
	return ev, ok
}

func (e *events) subscribe() *subscriber {
	s := &subscriber{ch: make(chan string, 16)}
	e.mu.Lock()
	e.subs = append(e.subs, s)
	e.mu.Unlock()
	go func() { // the forwarder
		for {
			ev, ok := s.nextEvent()
			if !ok {
				return
			}
			s.sent.Add(int64(len(ev)))
		}
	}()
	return s
}

// A client of the events API that disconnects: its forwarder stays, reachable from the list.
func TestMobyEventsSubscriber(t *testing.T) {
	e := &events{}
	run(t, kernel{
		family: "4", fn: func() { e.subscribe() },
		own: "example.com/kernels.(*events).subscribe.func1", file: "moby_test.go",
		def: "go func() { // the forwarder", goStmt: "go func() { // the forwarder",
	})
}
