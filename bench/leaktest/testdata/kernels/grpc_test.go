package kernels

import (
	"context"
	"sync"
	"testing"
	"time"
)

// clientStream receives a server stream's messages: its receiver reads frames off the
// transport until the stream's context ends. A client that reads the one message it wants
// and never cancels the stream leaves the receiver waiting in readFrame.
type clientStream struct {
	ctx       context.Context
	transport chan []byte
	msgs      chan []byte
}

func newClientStream(ctx context.Context) *clientStream {
	s := &clientStream{ctx: ctx, transport: make(chan []byte, 1), msgs: make(chan []byte, 1)}
	go s.recvLoop()
	return s
}

func (s *clientStream) recvLoop() {
	for {
		f, err := s.readFrame()
		if err != nil {
			return
		}
		s.msgs <- f
	}
}

func (s *clientStream) readFrame() ([]byte, error) {
	select {
	case f := <-s.transport:
		return f, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

// A unary call made over a stream whose context is never cancelled.
func TestGrpcStreamNotCancelled(t *testing.T) {
	run(t, kernel{
		fn: func() {
			ctx, _ := context.WithCancel(context.Background()) // the bug: the cancel is lost
			s := newClientStream(ctx)
			s.transport <- []byte("response")
			<-s.msgs
		},
		own: "example.com/kernels.(*clientStream).recvLoop", file: "grpc_test.go",
		def: "func (s *clientStream) recvLoop() {", goStmt: "go s.recvLoop()",
	})
}

// resolverWrapper hands a resolver's updates to the balancer: its watcher applies the
// initial state, then waits for updates on a condition variable. close marks it closed but
// wakes nobody.
type resolverWrapper struct {
	mu      sync.Mutex
	cond    *sync.Cond
	updates []string
	closed  bool
	applied int
	ready   chan struct{}
}

func newResolverWrapper(initial string) *resolverWrapper {
	ready := make(chan struct{})
	r := &resolverWrapper{updates: []string{initial}, ready: ready}
	r.cond = sync.NewCond(&r.mu)
	go r.watcher()
	<-ready // the initial state is applied
	return r
}

func (r *resolverWrapper) watcher() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.closed {
		r.applied += len(r.updates)
		r.updates = r.updates[:0]
		if r.ready != nil {
			close(r.ready)
			r.ready = nil
		}
		for len(r.updates) == 0 && !r.closed {
			r.cond.Wait()
		}
	}
}

func (r *resolverWrapper) close() {
	r.mu.Lock()
	r.closed = true // the bug: no r.cond.Broadcast()
	r.mu.Unlock()
}

// A channel dialled and closed: its resolver's watcher waits for good.
func TestGrpcResolverClosed(t *testing.T) {
	run(t, kernel{
		fn:  func() { newResolverWrapper("dns:///payments:443").close() },
		own: "example.com/kernels.(*resolverWrapper).watcher", file: "grpc_test.go",
		def: "func (r *resolverWrapper) watcher() {", goStmt: "go r.watcher()",
	})
}

// http2Client pings its server while it is idle, until the transport closes.
type http2Client struct {
	done  chan struct{}
	pings int
}

func (c *http2Client) keepalive(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.pings++
		case <-c.done:
			return
		}
	}
}

func newHTTP2Client() *http2Client {
	c := &http2Client{done: make(chan struct{})}
	go c.keepalive(10 * time.Millisecond)
	return c
}

// A transport made for a call and dropped without Close: its keepalive goroutine wakes on its
// ticker for good.
func TestGrpcKeepaliveNotClosed(t *testing.T) {
	run(t, kernel{
		fn:  func() { newHTTP2Client() },
		own: "example.com/kernels.(*http2Client).keepalive", file: "grpc_test.go",
		def: "func (c *http2Client) keepalive(", goStmt: "go c.keepalive(10 * time.Millisecond)",
	})
}

// serverHandlerTransport hands a request's body to its handler through a reader goroutine,
// which the handler stops by draining it; a handler that returns early leaves it blocked.
type serverHandlerTransport struct{ body chan []byte }

func (t *serverHandlerTransport) reader(data []byte) { t.body <- data }

func (t *serverHandlerTransport) handle(data []byte, early bool) {
	go t.reader(data)
	if early {
		return // the bug: the body is never read
	}
	<-t.body
}

// Family 4: the reader is a small method, inlined in the wrapper of its go statement: its
// definition line comes from the profile's start line.
func TestGrpcHandlerReturnsEarly(t *testing.T) {
	run(t, kernel{
		family: "4",
		fn: func() {
			st := &serverHandlerTransport{body: make(chan []byte)}
			st.handle([]byte("payload"), true)
		},
		own: "example.com/kernels.(*serverHandlerTransport).reader", file: "grpc_test.go",
		def: "func (t *serverHandlerTransport) reader(", goStmt: "go t.reader(data)",
	})
}
