package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// DefaultAddr is where ListenAndServe listens when given "".
const DefaultAddr = "127.0.0.1:6061"

// ErrNeedToken is returned by ListenAndServe and Serve for an address beyond loopback when
// the agent has no token (WithToken).
var ErrNeedToken = errors.New("the memdoctor agent serves beyond loopback only with a token (agent.WithToken)")

// ListenAndServe serves a's Handler under /debug/memdoctor/ at addr until ctx is done, then
// shuts the server down (in-flight requests get 5s) and returns nil. An address without a
// host (":6061") binds to loopback, as does "" (DefaultAddr). Any other address (":6061" is
// not one; "0.0.0.0:6061" and a host's IP are) needs the agent to have a token: every request
// must then carry "Authorization: Bearer <token>".
func ListenAndServe(ctx context.Context, a *Agent, addr string) error {
	addr, err := loopbackDefault(addr)
	if err != nil {
		return err
	}
	if !isLoopbackAddr(addr) && a.cfg.token == "" {
		return fmt.Errorf("memdoctor agent: listen on %s: %w", addr, ErrNeedToken)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("memdoctor agent: %w", err)
	}
	return Serve(ctx, a, ln)
}

// Serve is ListenAndServe on a listener of the caller's. It closes ln.
func Serve(ctx context.Context, a *Agent, ln net.Listener) error {
	if !isLoopbackAddr(ln.Addr().String()) && a.cfg.token == "" {
		ln.Close()
		return fmt.Errorf("memdoctor agent: serve on %s: %w", ln.Addr(), ErrNeedToken)
	}
	mux := http.NewServeMux()
	mux.Handle(Prefix, a.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelDebug), // never the process's stderr
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("memdoctor agent: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-errc
		return nil
	}
}

// loopbackDefault gives a host-less address the loopback host.
func loopbackDefault(addr string) (string, error) {
	if addr == "" {
		return DefaultAddr, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("memdoctor agent: address %q: %w (want host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// isLoopbackAddr reports whether a host:port is on the loopback interface only.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
