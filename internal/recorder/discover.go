package recorder

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/collect/scrape"
)

// findPprof looks for a net/http/pprof index on the TCP ports pid listens on. It returns nil
// and the ports it tried when none serves one.
func findPprof(ctx context.Context, fs procfs.FS, pid int) (*scrape.Client, []int) {
	var found *scrape.Client
	tried := probePorts(fs, pid, func(base string) bool {
		found = probePprof(ctx, base)
		return found != nil
	})
	return found, tried
}

// findAgent looks for a memdoctor agent on the TCP ports pid listens on. It returns its base
// URL, or "" and the ports it tried.
func findAgent(ctx context.Context, fs procfs.FS, pid int, opts []agentclient.Option) (string, []int) {
	var found string
	tried := probePorts(fs, pid, func(base string) bool {
		if _, err := probeAgent(ctx, base, 3*time.Second, opts); err == nil {
			found = base
		}
		return found != ""
	})
	return found, tried
}

// probePorts calls probe with the base URL of each TCP port pid listens on until it returns
// true, and returns the ports it tried.
func probePorts(fs procfs.FS, pid int, probe func(base string) bool) []int {
	ls, err := fs.ListeningPorts(pid)
	if err != nil {
		return nil
	}
	var tried []int
	for _, l := range ls {
		tried = append(tried, l.Port)
		if probe("http://" + net.JoinHostPort(dialHost(l.Addr), strconv.Itoa(l.Port))) {
			break
		}
	}
	return tried
}

// probePprof returns a client of the pprof index at base, or nil when none answers there.
func probePprof(ctx context.Context, base string) *scrape.Client {
	c, err := scrape.New(base, scrape.WithTimeout(2*time.Second), scrape.WithRetries(1, 0))
	if err != nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err = c.Probe(pctx)
	cancel()
	if err != nil {
		return nil
	}
	if c, err = scrape.New(c.BaseURL()); err == nil { // default timeouts and retries
		return c
	}
	return nil
}

// dialHost returns the address to reach a listener at from this machine.
func dialHost(a netip.Addr) string {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() { // 0.0.0.0, or [::] which Go listens on dual-stack
		return "127.0.0.1"
	}
	return a.String()
}
