package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/memdoctor/memdoctor/agent/wire"
	"github.com/memdoctor/memdoctor/internal/webui"
	"github.com/memdoctor/memdoctor/session"
)

var serveCmd = &command{
	name:    "serve",
	args:    "[flags] SESSION_DIR",
	summary: "serve a session's report locally, with pprof's web UI for any snapshot or the diff of two",
	help: `Serve diagnoses a saved session and serves its HTML report (the page "memdoctor report --html"
writes) on a local address, and prints the URL to open. On that page every finding that
compares two snapshots links to pprof's own web UI on their difference, and a picker opens any
snapshot, or the difference of any two, in pprof's web UI: flame graph, top, peek and graph
views, one click away (the graph view needs Graphviz's dot on the PATH). pprof's UIs start on
first use and the few most recently used are kept. The source and disassembly views are off:
they would show any local file a profile names (use go tool pprof -http on your own machine).
A view costs memory in proportion to the profile's frames: pprof is given at most 200,000 of
them, the least significant stacks folded into one frame that says how many (totals
unchanged).

Profiles show what the service holds and does: serve binds to loopback by default. To serve on
another address, give a token with --token or MEMDOCTOR_TOKEN (at least 16 printable
characters, as the agent requires; openssl rand -hex 16 makes one); every request must then carry
it, as "Authorization: Bearer TOKEN" or "?token=TOKEN" (the printed URL has it; the browser
keeps it in a cookie for the pages that follow). Serve stops on Ctrl-C.`,
	examples: []string{
		"memdoctor serve memdoctor-sessions/server-20261122T101500Z",
		"memdoctor serve --addr 127.0.0.1:8089 ./session",
		"MEMDOCTOR_TOKEN=$(openssl rand -hex 16) memdoctor serve --addr 0.0.0.0:8089 ./session",
	},
}

func init() { serveCmd.run = runServe }

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(serveCmd, e)
	addr := fs.String("addr", "127.0.0.1:0", "listen `ADDRESS` (host:port; port 0 picks a free one); a non-loopback address needs --token")
	token := fs.String("token", "", "require this `TOKEN` on every request (default $MEMDOCTOR_TOKEN); needed off loopback")
	var budget sizeFlag
	fs.Var(&budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: the session's)")
	pos, err := parse(serveCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("serve: want exactly one session directory, e.g. memdoctor serve ./session")
	}
	if *token == "" {
		*token = e.getenv("MEMDOCTOR_TOKEN")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usagef("serve: --addr %q: want host:port, e.g. 127.0.0.1:8089 (%v)", *addr, err)
	}
	if !webui.IsLoopback(host) && *token == "" {
		return usagef("serve: --addr %s is not loopback: profiles would be open to the network; give --token (or MEMDOCTOR_TOKEN), or bind to 127.0.0.1", *addr)
	}
	if *token != "" {
		if err := wire.CheckToken(*token); err != nil {
			return usagef("serve: --token (or MEMDOCTOR_TOKEN): %v", err)
		}
	}
	s, err := session.Open(pos[0])
	if err != nil {
		return err
	}
	d, ev, err := diagnoseSession(s, budget.bytes)
	if err != nil {
		return err
	}
	srv, err := webui.New(s, ev, d, webui.Options{Token: *token, HTML: htmlOptions(e), Logger: e.log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %s: %w", *addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	fmt.Fprintf(e.stdout, "%s\n", serveURL(ln.Addr().String(), *token))
	fmt.Fprintf(e.stderr, "memdoctor serve: session %s; Ctrl-C to stop\n", s.Dir)
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// serveURL is the URL to open: the bound address, with the token when there is one.
func serveURL(addr, token string) string {
	u := url.URL{Scheme: "http", Host: addr, Path: "/"}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return u.String()
}
