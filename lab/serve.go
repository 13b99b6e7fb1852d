package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// shutdownTimeout bounds the graceful part of a scenario's shutdown; after it
// the server's connections are closed.
const shutdownTimeout = 10 * time.Second

// service is what a scenario hands to serve: its handlers, the load that
// drives them and its background work.
type service struct {
	name string
	// routes maps http.ServeMux patterns ("POST /ingest") to handlers.
	routes map[string]http.HandlerFunc
	// loads generate the traffic, each with its own pace and concurrency.
	loads []load
	// background functions run beside the server until their context is
	// cancelled, which happens after the server has shut down.
	background []func(ctx context.Context)
	// listening, if set, is called once the server listens, before the load
	// starts, with a client of the server for the service's own calls to
	// itself (backends served by the same server). serve closes it.
	listening func(self *client)
	// stopping, if set, is called once ctx is done and the load has
	// stopped, before the server shuts down: lab bookkeeping that releases
	// what the scenario's bug holds (requests blocked for ever) goes here.
	stopping func()
}

// load is one stream of client requests. Its workers send requests one at a
// time, so at most workers requests of this load are in flight. With every > 0
// a pacer releases burst requests at once and burst more every period, and
// drops those that find every worker busy, so the rate is bounded too; with
// every == 0 the workers send back to back.
type load struct {
	workers int
	every   time.Duration
	burst   int
	// send sends one request as worker w (0 <= w < workers) and reads the
	// response. Workers never share w, so per-worker state needs no locking.
	send func(ctx context.Context, c *client, w int) error
}

// serve runs svc until ctx is done: it listens on env.Addr (loopback only),
// serves the pprof handlers and svc.routes on a private mux, prints the
// "serving" line, starts the load, and on ctx done stops the load, shuts the
// server down, stops the background work and prints the "stopped" line.
func serve(ctx context.Context, env Env, svc service) error {
	env = env.withDefaults()
	ln, err := listenLoopback(env.Addr)
	if err != nil {
		return fmt.Errorf("lab: %s: %w", svc.name, err)
	}
	mux := newMux(svc.routes)
	stopAg, err := mountAgent(mux, env.Logger, svc.name)
	if err != nil {
		ln.Close()
		return fmt.Errorf("lab: %s: %w", svc.name, err)
	}
	defer stopAg()
	// Requests see their context cancelled as soon as shutdown starts, so
	// that handlers waiting on something return promptly.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(env.Logger.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	start, gc0 := time.Now(), gcCycles()
	fmt.Fprintf(env.Stdout, servingFormat, svc.name, ln.Addr())
	env.Logger.Info("lab scenario started", "scenario", svc.name, "addr", ln.Addr().String())

	bgCtx, stopBackground := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	for _, f := range svc.background {
		bg.Go(func() { f(bgCtx) })
	}
	base := "http://" + ln.Addr().String()
	self := newClient(base, 16, 0)
	if svc.listening != nil {
		svc.listening(self)
	}
	workers := 0
	for _, l := range svc.loads {
		workers += l.workers
	}
	gen := &loadGen{client: newClient(base, workers, 128<<10), logger: env.Logger.With("scenario", svc.name)}
	loadCtx, stopLoad := context.WithCancel(ctx)
	for _, l := range svc.loads {
		gen.start(loadCtx, l)
	}

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("lab: %s: server stopped: %w", svc.name, err)
	}

	stopLoad()
	gen.wg.Wait()
	if svc.stopping != nil {
		svc.stopping()
	}
	cancelBase()
	shutdown(srv, env.Logger.With("scenario", svc.name), gen.client, self)
	stopBackground()
	bg.Wait()

	if n := gen.errors.Load(); n > 0 {
		env.Logger.Warn("lab load requests failed", "scenario", svc.name, "failed", n)
	}
	fmt.Fprintf(env.Stdout, "lab: %s stopped after %s: %d requests, %d gc cycles\n",
		svc.name, time.Since(start).Round(100*time.Millisecond), gen.client.requests.Load(), gcCycles()-gc0)
	return runErr
}

// newMux serves the net/http/pprof handlers (unless built with the nopprof tag) and routes.
func newMux(routes map[string]http.HandlerFunc) *http.ServeMux {
	mux := http.NewServeMux()
	servePprof(mux)
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
	}
	return mux
}

// shutdown shuts srv down gracefully, within shutdownTimeout, once the
// clients are no longer used.
func shutdown(srv *http.Server, logger *slog.Logger, clients ...*client) {
	// Close the clients' idle connections first: the server would wait 5s
	// for a connection that never carried a request.
	for _, c := range clients {
		c.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("lab scenario shutdown timed out; closing connections", "err", err)
		srv.Close()
	}
	for _, c := range clients {
		c.close()
	}
}

// listenLoopback listens on addr, which must be a loopback address.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("listen address %q is not loopback: the lab serves pprof, so it binds to loopback only (use 127.0.0.1:PORT or [::1]:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("listen address %q resolved to %s, which is not loopback", addr, ln.Addr())
	}
	return ln, nil
}

// gcCycles reads /gc/cycles/total:gc-cycles (never runtime.ReadMemStats:
// that stops the world).
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// loadGen runs the loads of one scenario.
type loadGen struct {
	client *client
	logger *slog.Logger
	wg     sync.WaitGroup
	errors atomic.Int64
}

func (g *loadGen) start(ctx context.Context, l load) {
	var tokens chan struct{}
	if l.every > 0 {
		burst := max(l.burst, 1)
		wake := max(l.every, paceWake)
		// Room for the tokens of one wake-up, plus, for fast loads, one
		// late tick's worth.
		room := burst * int((wake+l.every-1)/l.every)
		if l.every < 100*time.Millisecond {
			room += burst
		}
		tokens = make(chan struct{}, room)
		g.wg.Go(func() { pace(ctx, tokens, l.every, burst, wake) })
	}
	for w := range l.workers {
		g.wg.Go(func() { g.work(ctx, l, w, tokens) })
	}
}

// paceWake is the shortest sleep of a pacer: a faster load gets several
// tokens per wake-up.
const paceWake = 4 * time.Millisecond

// pace releases burst tokens at once and then burst more every period,
// waking up every wake. Tokens are counted from the start time rather than
// per timer tick, so that late wake-ups (timers on virtual machines can be
// late by milliseconds) do not lower the rate; tokens that find the channel
// full, because every worker is busy, are dropped.
func pace(ctx context.Context, tokens chan<- struct{}, every time.Duration, burst int, wake time.Duration) {
	start := time.Now()
	released := int64(0)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		due := int64(time.Since(start)/every) + 1 // ticks due so far
		released = max(released, due-int64(cap(tokens)/burst)-1)
		for ; released < due; released++ {
			for range burst {
				select {
				case tokens <- struct{}{}:
				default:
				}
			}
		}
		sleep := wake
		if every >= wake {
			sleep = time.Until(start.Add(time.Duration(due) * every))
		}
		t.Reset(sleep)
	}
}

func (g *loadGen) work(ctx context.Context, l load, w int, tokens <-chan struct{}) {
	for {
		if tokens != nil {
			select {
			case <-ctx.Done():
				return
			case <-tokens:
			}
		} else if ctx.Err() != nil {
			return
		}
		err := l.send(ctx, g.client, w)
		if err == nil || ctx.Err() != nil {
			continue
		}
		if g.errors.Add(1) == 1 {
			g.logger.Warn("lab load request failed (further failures are only counted)", "err", err)
		}
		// Back off so that a failing server cannot turn the load into a
		// busy loop.
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// client sends the load's requests over loopback with a private transport,
// so that closing it leaves no connection behind.
type client struct {
	base     string
	tr       *http.Transport
	hc       *http.Client
	requests atomic.Int64
}

// newClient returns a client of base keeping up to conns idle connections.
// A request body that fits in a connection's write buffer (writeBuffer
// bytes, 0 for net/http's 4 KiB) is copied into it; a larger one costs a
// 32 KiB copy buffer per request, garbage that is the load's, not the
// scenario's. A large buffer costs as much per new connection, though.
func newClient(base string, conns, writeBuffer int) *client {
	tr := &http.Transport{
		Proxy:               nil, // loopback: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     writeBuffer,
	}
	return &client{base: base, tr: tr, hc: &http.Client{Transport: tr}}
}

func (c *client) close() { c.tr.CloseIdleConnections() }

// call is one request of a load.
type call struct {
	method, path string
	contentType  string
	encoding     string      // Content-Encoding
	header       http.Header // read-only, may be shared between calls
	body         io.Reader   // a *bytes.Reader over a prebuilt payload, or nil
	length       int64       // Content-Length of a body net/http cannot size itself
}

// send sends k, drains and closes the response, and fails on a non-2xx status.
func (c *client) send(ctx context.Context, k call) error {
	req, err := http.NewRequestWithContext(ctx, k.method, c.base+k.path, k.body)
	if err != nil {
		return err
	}
	if k.header != nil {
		req.Header = k.header
	}
	if k.length > 0 {
		req.ContentLength = k.length
	}
	if k.contentType != "" || k.encoding != "" {
		if k.header != nil {
			req.Header = k.header.Clone()
		}
		if k.contentType != "" {
			req.Header.Set("Content-Type", k.contentType)
		}
		if k.encoding != "" {
			req.Header.Set("Content-Encoding", k.encoding)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.requests.Add(1)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: %s", k.method, k.path, resp.Status)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
