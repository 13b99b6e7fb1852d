package recorder

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/collect/procfs"
	"github.com/memdoctor/memdoctor/collect/scrape"
)

// findPprof looks for a net/http/pprof index on the TCP ports pid listens on. It returns nil
// and the ports it tried when none serves one.
func findPprof(ctx context.Context, fs procfs.FS, pid int) (*scrape.Client, []int) {
	ls, err := fs.ListeningPorts(pid)
	if err != nil {
		return nil, nil
	}
	var tried []int
	for _, l := range ls {
		host := dialHost(l.Addr)
		c, err := scrape.New("http://"+net.JoinHostPort(host, strconv.Itoa(l.Port)), scrape.WithTimeout(2*time.Second), scrape.WithRetries(1, 0))
		if err != nil {
			continue
		}
		tried = append(tried, l.Port)
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = c.Probe(pctx)
		cancel()
		if err == nil {
			if c, err = scrape.New(c.BaseURL()); err == nil { // default timeouts and retries
				return c, tried
			}
		}
	}
	return nil, tried
}

// dialHost returns the address to reach a listener at from this machine.
func dialHost(a netip.Addr) string {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() { // 0.0.0.0, or [::] which Go listens on dual-stack
		return "127.0.0.1"
	}
	return a.String()
}
