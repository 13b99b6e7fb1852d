package recorder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// Watch attaches to a running service at rawURL and records a session until ctx is done,
// cfg.Duration has passed, or the service goes away. The service serves net/http/pprof, an
// embedded memdoctor agent (/debug/memdoctor/), or both; rawURL may name the service, its
// pprof index or its agent. With an agent, the whole history it holds is copied at once and
// then as it grows: samples, labelled profiles, traces. When the service runs on this
// machine, Watch also finds its process (the one listening on the URL's port) and samples its
// /proc, unless the agent's samples already carry it. When the agent starves (its answers
// time out or its newest sample falls behind: a service whose own goroutines take its CPU),
// a local service that holds the watched socket and links the agent is read from its memory
// from then on, the agent still pulled (agentmem.go). A service that goes away and answers
// again within cfg.RestartGrace is followed (see followRestart). It fails with
// ErrSessionWrite when the session could not be written whole.
//
// cfg.PID names the process to sample instead (a service behind a proxy or a port-forward
// answers on a port another process listens on). Either way, a process that is not the
// service (its command line differs from the one the service's pprof gives, or, failing
// that, its RSS is well below the service's Go heap) has its readings dropped with a note.
func Watch(ctx context.Context, cfg Config, rawURL string) (Result, error) {
	cfg.defaults()
	if cfg.PID != 0 {
		if err := checkPID(cfg.FS, cfg.PID); err != nil {
			return Result{}, fmt.Errorf("--pid %d: %w", cfg.PID, err)
		}
	}
	tg, err := probeTarget(ctx, cfg, rawURL)
	if err != nil {
		if pid, why, ok := starvedLocal(cfg, rawURL, err); ok {
			return watchMemory(ctx, cfg, pid, why, pprofIndex)
		}
		return Result{}, err
	}
	start := time.Now()
	m := session.Manifest{MemdoctorVersion: cfg.Version, Mode: cfg.Mode, Start: start.UTC(), Flags: cfg.Flags}
	tg.describe(&m.Target)
	w, err := session.CreateFS(cfg.SessionFS, cfg.Out, m)
	if err != nil {
		return Result{}, err
	}
	r := newRecorder(cfg, w)
	r.watched = tg
	if tg.pprof != nil {
		r.setPprof(tg.pprof)
	}
	r.agent = tg.agent
	r.status.Profiles = r.status.Profiles || tg.agent != nil
	for _, n := range tg.notes {
		r.addNote("%s", n)
	}
	if cfg.MemoryBudget > 0 {
		r.note(func(m *session.Manifest) { m.MemoryBudgetBytes, m.MemoryBudgetSource = cfg.MemoryBudget, "flag" })
	}
	if m := r.findLocalProcess(tg); tg.pprof != nil {
		pid, _ := r.target()
		r.readMemoryToo(pid, m)
	}

	// The duration counts from the first readings: opening the service's memory (its
	// executable's symbols and types) takes a fraction of a second, seconds on a loaded machine.
	var deadline time.Time // zero: no --duration
	if cfg.Duration > 0 {
		deadline = time.Now().Add(cfg.Duration)
	}
	var res Result
	for {
		res = r.watchUntilGone(ctx, tg, deadline)
		if res.Status != session.StatusTargetExited {
			break
		}
		if back, end := r.followRestart(ctx, tg, deadline, res.Detail); !back {
			res = end
			break
		}
	}
	running := res.Status == session.StatusComplete || res.Status == session.StatusInterrupted
	if running {
		r.finalSnapshot()
		if r.agent != nil {
			fctx, cancel := r.abortable(10 * time.Second)
			r.pullAgent(fctx)
			cancel()
		}
	}
	r.readHolders(res, running)
	r.settleProc()
	// Beside pprof, the last profiles came with the final snapshot; beside a starved agent,
	// they are read from memory now.
	r.closeMemory(running && r.memBesideAgent())
	if r.agent != nil {
		r.agentSummary()
	}
	r.noteIndex()
	r.noteGCAsks()
	r.noteAttempts()
	r.flushManifest() // the last counts
	if err := w.Close(res.Status, res.Detail); err != nil {
		r.writeFailed(err)
	}
	return res, r.writeError()
}

// watchTarget is what answered at the URL: a pprof index, an agent, or both.
type watchTarget struct {
	pprof *scrape.Client // nil when the service serves no pprof
	agent *agentSource   // nil when it embeds no agent
	notes []string
}

func (tg *watchTarget) baseURL() string {
	if tg.pprof != nil {
		return tg.pprof.BaseURL()
	}
	return tg.agent.c.BaseURL()
}

// describe fills what the target's endpoints tell about it.
func (tg *watchTarget) describe(t *session.Target) {
	if tg.pprof != nil {
		t.PprofURL = tg.pprof.BaseURL()
	}
	if tg.agent == nil {
		return
	}
	in := tg.agent.info
	t.AgentURL = tg.agent.c.BaseURL()
	t.GoVersion, t.GoVersionSource = in.GoVersion, "agent"
	if t.MainModule == "" {
		t.MainModule = in.MainModule
	}
	if t.PID == 0 {
		t.PID = in.PID // as the agent sees itself, in its own PID namespace
	}
	if t.Started.IsZero() {
		t.Started = in.Start.UTC() // the agent starts with the process, or near it
	}
}

// probeTarget finds what serves rawURL. A URL naming the agent's tree must reach an agent;
// pprof beside it is optional. Any other URL must reach pprof or an agent: the pprof error is
// reported when neither answers.
func probeTarget(ctx context.Context, cfg Config, rawURL string) (*watchTarget, error) {
	tg := &watchTarget{}
	var scrapeOpts []scrape.Option
	var agentOpts []agentclient.Option
	if cfg.Token != "" {
		scrapeOpts = append(scrapeOpts, scrape.WithBearerToken(cfg.Token))
		agentOpts = append(agentOpts, agentclient.WithToken(cfg.Token))
	}
	switch cfg.Source {
	case SourcePprof:
		return probePprofOnly(ctx, rawURL, scrapeOpts)
	case SourceAgent:
		return probeAgentOnly(ctx, rawURL, agentOpts)
	}
	if agentclient.PointsAtAgent(rawURL) {
		a, err := probeAgent(ctx, rawURL, 15*time.Second, agentOpts)
		if err != nil {
			return nil, err
		}
		tg.agent = a
		c, err := scrape.New(agentclient.PprofURL(rawURL), append(scrapeOpts, scrape.WithTimeout(3*time.Second), scrape.WithRetries(1, 0))...)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = c.Probe(pctx)
			cancel()
		}
		if err == nil {
			tg.pprof, err = scrape.New(c.BaseURL(), scrapeOpts...)
		}
		if err != nil {
			tg.notes = append(tg.notes, "no net/http/pprof beside the agent: the profiles are the agent's")
		}
		return tg, nil
	}
	c, err := scrape.New(rawURL, scrapeOpts...)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	perr := c.Probe(pctx)
	cancel()
	if perr == nil {
		tg.pprof = c
	}
	if a, err := probeAgent(ctx, rawURL, 5*time.Second, agentOpts); err == nil {
		tg.agent = a
	} else if errors.Is(err, agentclient.ErrUnauthorized) {
		tg.notes = append(tg.notes, "the service embeds a memdoctor agent that wants a token: pass --token or MEMDOCTOR_TOKEN to record its history")
	}
	if tg.pprof == nil && tg.agent == nil {
		return nil, perr
	}
	if tg.pprof == nil {
		tg.notes = append(tg.notes, fmt.Sprintf("no net/http/pprof at %s: the profiles are the agent's", c.BaseURL()))
	}
	return tg, nil
}

// probePprofOnly is --source pprof: the service's net/http/pprof, required; an embedded
// agent is neither probed nor read (a URL naming the agent's tree means the pprof index
// beside it).
func probePprofOnly(ctx context.Context, rawURL string, opts []scrape.Option) (*watchTarget, error) {
	c, err := scrape.New(agentclient.PprofURL(rawURL), opts...)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Probe(pctx); err != nil {
		return nil, fmt.Errorf("--source pprof: %w", err)
	}
	return &watchTarget{pprof: c, notes: []string{"--source pprof: recorded from net/http/pprof only; an embedded memdoctor agent, if any, was not read"}}, nil
}

// probeAgentOnly is --source agent: an embedded memdoctor agent, required; net/http/pprof
// beside it is not scraped.
func probeAgentOnly(ctx context.Context, rawURL string, opts []agentclient.Option) (*watchTarget, error) {
	a, err := probeAgent(ctx, rawURL, 15*time.Second, opts)
	if err != nil {
		return nil, fmt.Errorf("--source agent: no memdoctor agent answered: %w", err)
	}
	return &watchTarget{agent: a, notes: []string{"--source agent: recorded from the memdoctor agent only; net/http/pprof, if served, was not scraped"}}, nil
}

func probeAgent(ctx context.Context, rawURL string, timeout time.Duration, opts []agentclient.Option) (*agentSource, error) {
	ac, err := agentclient.New(rawURL, opts...)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err := ac.Info(pctx)
	if err != nil {
		return nil, err
	}
	return newAgentSource(ac, info), nil
}

// findLocalProcess finds the service's process when it runs on this machine, so that its
// /proc and cgroup are sampled too, and records it in the manifest; it notes why not
// otherwise. It says how the process is told to be the service (see match).
func (r *recorder) findLocalProcess(tg *watchTarget) (m match) {
	pid, port, err := r.cfg.PID, "", error(nil)
	if pid == 0 {
		pid, port, err = localPID(r.cfg.FS, tg.baseURL())
	}
	if err != nil {
		r.addNote("no /proc figures from memdoctor itself (RSS, non-Go memory, cgroup): %v", err)
	} else if p, err := inspect(r.cfg.FS, pid, 0, 0); err != nil {
		r.addNote("no /proc figures from memdoctor itself: process %d: %v", pid, err)
	} else {
		r.mu.Lock()
		r.pid, r.targetName = pid, p.Name
		r.mu.Unlock()
		r.checkProcess(r.cfg.PID != 0, port, p.Exe)
		t := targetInfo(r.cfg.FS, p)
		if tg.pprof != nil {
			ctx, cancel := context.WithTimeout(context.Background(), cmdlineWait)
			mk := r.markCost()
			args, err := tg.pprof.Cmdline(ctx)
			r.servedCost(session.DataCmdline, mk)
			cancel()
			if err == nil && r.identify(args, t.Cmdline) && !slices.Equal(args, t.Cmdline) {
				return match{} // not the service: identify noted why
			}
			m.byCmdline = err == nil && len(args) > 0 && slices.Equal(args, t.Cmdline)
			if !m.byCmdline && err != nil && unanswered(err) {
				m.bySocket = bySocket(pid, port, r.cfg.PID != 0)
			}
		}
		tg.describe(&t)
		var budget uint64
		if r.cfg.MemoryBudget == 0 {
			if cg, err := r.cfg.FS.Cgroup(pid); err == nil {
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
	return m
}

// starvedLocal finds, for a URL whose pprof did not answer at all (err), the local process
// that holds its socket, to be read from its memory instead: a service starved of CPU by its
// own goroutines, or stuck, answers nothing, and its memory says why. Only with --source auto
// (or memory), and where memory can be read.
func starvedLocal(cfg Config, rawURL string, err error) (pid int, why string, ok bool) {
	if !unanswered(err) || !cfg.ReadMemory || !procSupported || cfg.Source != SourceAuto && cfg.Source != SourceMemory {
		return 0, "", false
	}
	pid, port := cfg.PID, ""
	if pid == 0 {
		var lerr error
		if pid, port, lerr = localPID(cfg.FS, agentclient.PprofURL(rawURL)); lerr != nil {
			return 0, "", false
		}
	}
	return pid, fmt.Sprintf("its pprof at %s did not answer (%v), so its process was matched by its socket: %s", rawURL, err, bySocket(pid, port, cfg.PID != 0)), true
}

// cmdlineWait bounds the wait for the service's command line, which proves its process.
const cmdlineWait = 5 * time.Second

// match is how the local process found for a watched service is told to be the service. Its
// command line, when the service's pprof serves it, proves it (byCmdline). When the pprof
// does not answer at all (a service starved of CPU by its own goroutines, or stuck), the
// process is matched by its socket alone (bySocket says how): the one that holds the socket
// listening on the URL's port, or the one --pid names; its memory is read only when it links
// net/http/pprof as the service does (readMemoryToo).
type match struct {
	byCmdline bool
	bySocket  string
}

// bySocket says how a process was matched without its command line.
func bySocket(pid int, port string, given bool) string {
	if given {
		return fmt.Sprintf("given by --pid %d", pid)
	}
	return fmt.Sprintf("process %d holds the socket listening on :%s (the socket's inode in /proc/net/tcp, found among /proc/%d/fd)", pid, port, pid)
}

// unanswered reports whether a request got no answer in time: the service is there (its port
// accepts) but does not answer, as opposed to refusing the connection (gone) or answering
// something else.
func unanswered(err error) bool {
	return errors.Is(err, scrape.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
}

// watchUntilGone runs the collection loops until the user, the deadline, or the service
// going away ends them.
func (r *recorder) watchUntilGone(ctx context.Context, tg *watchTarget, deadline time.Time) Result {
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	if r.agent != nil {
		r.pullAgent(loopCtx) // the history first: /proc sampling depends on what it carries
		loops.Go(func() { r.agentLoop(loopCtx) })
		loops.Go(func() { r.memLoop(loopCtx) }) // reads only once a starved agent opened the memory
	}
	loops.Go(func() { r.sampleLoop(loopCtx, nil) })
	if tg.pprof != nil {
		loops.Go(func() { r.profileLoop(loopCtx) })
		loops.Go(func() { r.leakLoop(loopCtx) })
	}
	res := r.awaitWatchEnd(ctx, tg.baseURL(), deadline)
	stopLoops()
	loops.Wait()
	return res
}

// awaitWatchEnd waits for what ends a watch: the user, the deadline, or the service going
// away.
func (r *recorder) awaitWatchEnd(ctx context.Context, base string, deadline time.Time) Result {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		timeout = timer.C
	}
	var settle, first <-chan time.Time
	var ticker *time.Ticker
	if r.cfg.Settled != nil {
		ticker = time.NewTicker(r.cfg.Interval)
		defer ticker.Stop()
		settle = ticker.C
		// A first look once two samples are in (the first is taken as the loops start): a
		// verdict that waits on a reading of the live heap gets one at the start, not an
		// interval later.
		f := time.NewTimer(r.cfg.Sample + r.cfg.Sample/2)
		defer f.Stop()
		first = f.C
	}
	res := Result{Dir: r.cfg.Out, TargetExit: -1}
	for {
		select {
		case <-ctx.Done():
			res.Status, res.Detail = session.StatusInterrupted, "stopped by the user"
		case <-r.cfg.Abort:
			res.Status, res.Detail = session.StatusInterrupted, "stopped at once by the user"
		case <-timeout:
			res.Status, res.Detail = session.StatusComplete, fmt.Sprintf("watched for %s", r.cfg.Duration)
		case <-r.gone:
			res.Status, res.Detail = session.StatusTargetExited, "the service's process exited"
		case <-r.unreachable:
			res.Status, res.Detail = session.StatusTargetExited, fmt.Sprintf("the service stopped answering at %s", base)
		case <-first:
			if !r.look(ctx, &res, ticker) {
				continue
			}
		case <-settle:
			if !r.look(ctx, &res, ticker) {
				continue
			}
		}
		return res
	}
}

// look looks at the session so far (Config.Settled): done, it sets res and reports true; else
// it asks the service for a GC when a verdict waits on a reading of the live heap. Having got
// one, it takes a sample at once (the reading the GC made) and looks again: the verdict it was
// asked for does not wait for the next sample, nor for the next interval. The looks' ticker
// then counts the interval from this GC, so that the next one, if a verdict still waits, is
// asked an interval after it, not up to two intervals.
func (r *recorder) look(ctx context.Context, res *Result, ticker *time.Ticker) bool {
	l := r.cfg.Settled()
	if !l.Done {
		if !r.askGC(ctx, l.AwaitsGC, time.Now()) {
			return false
		}
		ticker.Reset(r.cfg.Interval)
		if !r.sampleNow(ctx) {
			return false
		}
		l = r.cfg.Settled()
	}
	if l.Done {
		res.Status, res.Detail = session.StatusComplete, l.Why
	}
	return l.Done
}

// sampleNow has the sample loop take one sample at once, and waits for it (at most an
// interval); it reports whether the sample was taken.
func (r *recorder) sampleNow(ctx context.Context) bool {
	done := make(chan struct{})
	t := time.NewTimer(r.cfg.Interval)
	defer t.Stop()
	select {
	case r.sampleAsked <- done:
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// localPID finds the process on this machine that listens on the URL's port, and the port.
// It fails, saying why, when the host is not this machine or the owner of the socket cannot
// be seen.
func localPID(fs procfs.FS, base string) (int, string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, "", err
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
		return 0, "", fmt.Errorf("%s is not an address of this machine", u.Hostname())
	}
	pid, err := fs.PIDListeningOn(addr, port)
	if err != nil {
		return 0, "", err
	}
	return pid, strconv.Itoa(port), nil
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
