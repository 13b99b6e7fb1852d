package recorder

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/collect/procfs"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// Watch attaches to a running service that serves net/http/pprof at rawURL and records a
// session until ctx is done, cfg.Duration has passed, or the service goes away. When the
// service runs on this machine, it also finds its process (the one listening on the URL's
// port) and samples its /proc.
func Watch(ctx context.Context, cfg Config, rawURL string) (Result, error) {
	cfg.defaults()
	c, err := scrape.New(rawURL)
	if err != nil {
		return Result{}, err
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = c.Probe(pctx)
	cancel()
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	w, err := session.Create(cfg.Out, session.Manifest{
		MemdoctorVersion: cfg.Version, Mode: cfg.Mode, Start: start.UTC(), Flags: cfg.Flags,
		Target: session.Target{PprofURL: c.BaseURL()},
	})
	if err != nil {
		return Result{}, err
	}
	r := newRecorder(cfg, w)
	r.setPprof(c)
	if cfg.MemoryBudget > 0 {
		r.note(func(m *session.Manifest) { m.MemoryBudgetBytes, m.MemoryBudgetSource = cfg.MemoryBudget, "flag" })
	}
	if pid, err := localPID(cfg.FS, c.BaseURL()); err != nil {
		r.addNote("no /proc figures (RSS, non-Go memory, cgroup): %v", err)
	} else if p, err := inspect(cfg.FS, pid, 0, 0); err != nil {
		r.addNote("no /proc figures: process %d: %v", pid, err)
	} else {
		r.mu.Lock()
		r.pid, r.targetName = pid, p.Name
		r.mu.Unlock()
		t := targetInfo(cfg.FS, p)
		t.PprofURL = c.BaseURL()
		var budget uint64
		if cfg.MemoryBudget == 0 {
			if cg, err := cfg.FS.Cgroup(pid); err == nil {
				budget = cg.LimitBytes
			}
		}
		r.note(func(m *session.Manifest) {
			m.Target = t
			if budget > 0 {
				m.MemoryBudgetBytes, m.MemoryBudgetSource = budget, "cgroup"
			}
		})
		r.log.Info("found the service's process", "pid", pid, "exe", p.Exe, "go", p.GoVersion)
	}

	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	loops.Go(func() { r.sampleLoop(loopCtx, nil) })
	loops.Go(func() { r.profileLoop(loopCtx) })
	var timeout <-chan time.Time
	if cfg.Duration > 0 {
		timer := time.NewTimer(cfg.Duration)
		defer timer.Stop()
		timeout = timer.C
	}
	res := Result{Dir: cfg.Out, TargetExit: -1}
	select {
	case <-ctx.Done():
		res.Status, res.Detail = session.StatusInterrupted, "stopped by the user"
	case <-timeout:
		res.Status, res.Detail = session.StatusComplete, fmt.Sprintf("watched for %s", cfg.Duration)
	case <-r.gone:
		res.Status, res.Detail = session.StatusTargetExited, "the service's process exited"
	case <-r.unreachable:
		res.Status, res.Detail = session.StatusTargetExited, fmt.Sprintf("the service stopped answering at %s", c.BaseURL())
	}
	if res.Status == session.StatusComplete || res.Status == session.StatusInterrupted {
		r.finalSnapshot()
	}
	stopLoops()
	loops.Wait()
	if err := w.Close(res.Status, res.Detail); err != nil {
		r.writeFailed(err)
	}
	return res, nil
}

// localPID finds the process on this machine that listens on the URL's port. It fails, saying
// why, when the host is not this machine or the owner of the socket cannot be seen.
func localPID(fs procfs.FS, base string) (int, error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	addr, ok := localAddr(u.Hostname())
	if !ok {
		return 0, fmt.Errorf("%s is not an address of this machine", u.Hostname())
	}
	pid, err := fs.PIDListeningOn(addr, port)
	if err != nil {
		return 0, err
	}
	return pid, nil
}

// localAddr resolves host and reports whether it is an address of this machine. The address
// returned is the unspecified address for loopback names: a service bound to 0.0.0.0 also
// answers on 127.0.0.1.
func localAddr(host string) (netip.Addr, bool) {
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, false
	}
	ifaddrs, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		a = a.Unmap()
		if a.IsLoopback() {
			return netip.Addr{}, true
		}
		for _, ia := range ifaddrs {
			if n, ok := ia.(*net.IPNet); ok && n.IP.Equal(ip) {
				return netip.Addr{}, true
			}
		}
	}
	return netip.Addr{}, false
}
