package cli

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/session"
)

var watchCmd = &command{
	name:    "watch",
	args:    "[flags] URL | PID",
	summary: "attach to a running service (net/http/pprof or the memdoctor agent), record a session, diagnose it",
	help: `Watch attaches to a running service through its net/http/pprof endpoints, its embedded memdoctor
agent (/debug/memdoctor/), or both. URL is the service's base (http://127.0.0.1:6060), its
pprof index (http://127.0.0.1:6060/debug/pprof/) or its agent (.../debug/memdoctor/). With an
agent, watch copies the whole history it keeps (an hour of runtime/metrics samples, profiles,
the before/after pairs of spikes, traces), including what happened before watch attached,
and then follows it. An agent bound beyond loopback needs its token: --token, or the
MEMDOCTOR_TOKEN environment variable. When the URL is on this machine, watch finds the
process listening on that port (through /proc/net/tcp{,6} and the socket's inode) and
samples its /proc and cgroup as well, unless the agent does; it says so when it can't.
Every --sample it reads the counts of the pprof index page (the goroutine count, without
stopping the world; only at the start and after each goroutineleak fetch when the service's
memory gives the count). When the service serves the goroutineleak profile (Go 1.27, or Go 1.26
built with GOEXPERIMENT=goroutineleakprofile), watch fetches it at the start, when the
goroutine count climbs, and otherwise every --leak-check-every; each fetch runs one GC cycle
with leak detection in the service (with an agent, the agent takes these profiles and watch
copies them). The only other GC memdoctor causes is --until-confirmed's (below). When the local service's memory comes
within 10% of its cgroup limit or --memory-budget and rises, watch takes heap and goroutine
profiles at once, outside the interval (labelled before-oom; at most one a second, one per
1% of the limit climbed); when the service then vanishes, the cgroup's OOM-kill count, or
its last reading near the limit, makes the diagnosis say so (oom-risk, critical), with what
those profiles held. --source pprof records from pprof alone (never the agent),
--source agent from the agent alone, to compare vantage points.
An agent starved by its own service (its answers late or none, its newest sample 5 of its
periods behind), watched alone (--source agent, or no pprof served), leaves the rest of the
window to the service's memory: a local service
whose process holds the watched socket and links the agent is read from its memory from
then on, as below (runtime figures and goroutine count every sample, heap profile every
interval, stacks without stopping it), the agent still pulled, and the session says so.
A local service that watch may trace (Linux: root, or CAP_SYS_PTRACE), whose command line is
the one its pprof serves, is also read from its memory, as a process without pprof is (see
below), for what that gives at no cost to it: its heap profile, memory statistics, GC
figures and goroutine count, which it then neither serves, nor allocates for, nor stops its
world for; its goroutine stacks from pprof, or from its memory with --stacks-stop when the stop
of every thread that takes is predicted to last no longer; goroutine dumps, goroutineleak
profiles and the index page's other counts always from pprof. The stacks are read again only
when the goroutine count moved (1%, or 5) or --leak-check-every passed. Past 50,000 goroutines,
or once the service's pprof leaves a request unanswered (a service starved of CPU by its own
spinning goroutines answers nothing in time), its stacks are read from its memory without
stopping it: each goroutine that is not running read alone and checked unchanged, a sample
of 5,000 spread over all of them past that many. When its pprof does not answer for its
command line, or at all, the process is matched by its socket (the one holding the socket
that listens on the URL's port) and read when it links net/http/pprof, and the session says
so; a pprof that answers nothing is then not taken for a service gone. --read-memory=false asks pprof for
everything. The session says, per kind of data, where it came from and what that cost the
service (its CPU, its stops; memdoctor report shows it).
Behind a proxy or a port-forward (kubectl port-forward, ssh -L) that process is the
forwarder: a Go heap well above its RSS gives it away, and watch then drops its figures
with a note. --pid names the service's own process instead. Given a PID instead of a URL,
watch attaches to that local process, as gops does: it finds the port its pprof or agent
serves on among those it listens on. A process that serves neither (or --source memory) is
read from its memory, without stopping it (Linux, with permission to trace it: root, or
CAP_SYS_PTRACE): the heap profile the runtime would serve (its memory-profile buckets,
symbolized from the binary), its memory statistics, GC figures and goroutine count, every
--sample and --interval as above; goroutine profiles stop the process for the time it takes
to list its goroutines' stacks, at the start, when the goroutine count climbs and every
--leak-check-every (0: never stop it), and the session says how long each stop lasted;
when that stop is predicted longer than 100ms (about 10,000 goroutines), the stacks are
read without stopping it, as above. A
program that imports neither runtime/pprof nor net/http/pprof has heap profiling off
(runtime.MemProfileRate 0): --enable-heap-profiling turns it on by writing the default rate
(512 KiB) into the process, the only write memdoctor ever makes to one, and the profiles then
cover the allocations made from that moment. It needs the executable's symbols and DWARF
(the default go build; not -ldflags=-s or -w) and Go 1.26 or 1.27.
A PID and --pid need Linux; a URL works everywhere.
A service that goes away and answers again at the same URL within 30s (restarted by its
supervisor) is followed: watch finds its new process and notes the restart in the session,
since its cumulative counters start again. Watch stops at --duration, on Ctrl-C, or when the
service stays away, and prints the diagnosis. With --until-confirmed it diagnoses the session every --interval and stops as
soon as a problem is confirmed with nothing else suspected (each confirmation holds its
stated false-alarm rate however often it is looked at: see docs/verdicts.md), or, finding no
problem, once nothing is left that watching longer would let it judge (after 30s at least);
at most --duration, 10m by default. The live heap is read only when the service's GC runs,
seconds or minutes apart on a heap that grows slowly: while a verdict waits on a reading of it
(a heap leak suspected, or not judged yet while the heap climbs; a spike still up), such a
watch asks the service's pprof for one GC (heap?gc=1), at most one per --interval, none when
the service's own GC just ran, none on a live heap whose GC would cost it more than
--request-gc of CPU (100ms: about a 100 MiB heap; 0: never); the session's costs count them.
A service read from its memory alone cannot be asked: the diagnosis says how often its GC
runs, which is what the verdict waits on.`,
	examples: []string{
		"memdoctor watch --duration 10m http://127.0.0.1:6060",
		"memdoctor watch --interval 30s --memory-budget 4GiB --json - http://10.0.0.7:6060/debug/pprof/",
		"MEMDOCTOR_TOKEN=... memdoctor watch --duration 5m http://10.0.0.7:6061/debug/memdoctor/",
		"memdoctor watch --until-confirmed --duration 15m http://127.0.0.1:6060",
		"memdoctor watch --until-confirmed --interval 5s --request-gc 250ms http://127.0.0.1:6060   # a heap up to ~250 MiB",
		"memdoctor watch --source pprof --leak-check-every 0 http://127.0.0.1:6060",
		"memdoctor watch 4242",
		"memdoctor watch --enable-heap-profiling --duration 10m 4242   # serves no pprof, links no profiling",
		"memdoctor watch --pid 4242 http://127.0.0.1:8080   # through a local proxy or port-forward",
	},
}

func init() { watchCmd.run = runWatch }

func runWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(watchCmd, e)
	var cf collectFlags
	cf.register(fs, false)
	token := fs.String("token", "", "bearer `TOKEN` for a memdoctor agent's endpoints (default: $MEMDOCTOR_TOKEN)")
	untilConfirmed := fs.Bool("until-confirmed", false, "stop as soon as a problem is confirmed and nothing else is suspected, or, finding none, once nothing is left that more time would settle (after 30s at least; at most --duration, default 10m)")
	source := fs.String("source", recorder.SourceAuto, "record from `SOURCE`: auto (pprof, the agent, or both; by PID, the process's memory when it serves neither), pprof (never the agent), agent (required; never pprof), memory (a PID's memory only)")
	enableHeap := fs.Bool("enable-heap-profiling", false, enableHeapHelp)
	readMemory := fs.Bool("read-memory", true, "read a local service watched over pprof from its memory too (Linux, permission to trace it): its heap profile, runtime figures and goroutine count at no cost to it; false: ask its pprof for everything")
	requestGC := fs.Duration("request-gc", recorder.DefaultRequestGC, "with --until-confirmed, ask a service that serves pprof for a GC (heap?gc=1, at most one per --interval, none when its own GC just ran) while a verdict waits on a reading of its live heap, on a heap whose GC would cost it up to `D` of CPU (100ms: about a 100 MiB live heap); 0: never")
	stacksStop := fs.Duration("stacks-stop", 0, "let watch stop a local service read from its memory for up to `D` to read its goroutines' stacks there rather than ask its pprof (predicted from the goroutine count; a longer stop is left to pprof); 0: never stop it for them")
	pid := fs.Int("pid", 0, "sample the /proc of this local `PID`, not of the process listening on the URL's port (a proxy or port-forward)")
	fs.BoolVar(&cf.output.holders, "holders", false, "at the end, when a heap leak is confirmed and the process can be read (Linux, ptrace allowed), read who holds it (memdoctor holders): the finding shows the paths, the session keeps them")
	cf.output.stop.register(fs, "--holders")
	pos, err := parse(watchCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("watch: want exactly one URL or PID, e.g. memdoctor watch http://127.0.0.1:6060")
	}
	if err := cf.check(); err != nil {
		return err
	}
	switch *source {
	case recorder.SourceAuto, recorder.SourcePprof, recorder.SourceAgent, recorder.SourceMemory:
	default:
		return usagef("--source %q: want auto, pprof, agent or memory", *source)
	}
	target, byPID := pos[0], 0
	if n, err := strconv.Atoi(target); err == nil {
		if n <= 0 || *pid != 0 {
			return usagef("watch: %s: want a URL, or the PID of a local process without --pid", target)
		}
		byPID = n
	} else if *pid < 0 {
		return usagef("watch: --pid %d: not a process ID", *pid)
	}
	if *requestGC < 0 {
		return usagef("watch: --request-gc %s: want a duration of 0 or more (0: never ask the service for a GC)", *requestGC)
	}
	if *stacksStop < 0 {
		return usagef("watch: --stacks-stop %s: want a duration of 0 or more (0: never stop the service for its stacks)", *stacksStop)
	}
	if *source == recorder.SourceMemory && byPID == 0 {
		return usagef("watch: --source memory reads a local process: give its PID, not a URL")
	}
	name := hostName(target)
	if byPID != 0 {
		name = "pid-" + target
	}
	cfg := cf.config(e, "watch", name, fs)
	cfg.PID = *pid
	cfg.Token = *token
	cfg.Source = *source
	cfg.EnableHeapProfiling = *enableHeap
	if cf.output.holders {
		cfg.Holders = holdersAtEnd(e, cfg.Out, cfg.MemoryBudget, true, cf.output.stop)
	}
	cfg.ReadMemory = *readMemory
	cfg.StacksStop = *stacksStop
	if *untilConfirmed {
		cfg.RequestGC = *requestGC
	}
	if cfg.Token == "" {
		cfg.Token = e.getenv("MEMDOCTOR_TOKEN")
	}
	if _, ok := cfg.Flags["token"]; ok {
		cfg.Flags["token"] = "(redacted)" // the manifest records the flags: never the secret
	}
	if *untilConfirmed {
		if cfg.Duration == 0 {
			cfg.Duration = untilConfirmedMax
		}
		var settledAt time.Time
		cfg.Settled = settledCheck(cfg.Out, cf.budget.bytes, &settledAt)
		cf.output.until = func() time.Time { return settledAt }
	}
	return record(ctx, e, cfg, cf.output, func(ctx context.Context, abort <-chan struct{}) (recorder.Result, error) {
		cfg.Abort = abort
		if byPID != 0 {
			return recorder.WatchPID(ctx, cfg, byPID)
		}
		return recorder.Watch(ctx, cfg, target)
	})
}

// enableHeapHelp is the --enable-heap-profiling flag's help, for run and watch.
const enableHeapHelp = "when a process read from its memory has heap profiling off (it links no profiling), turn it on: memdoctor writes the default rate (512 KiB) into its runtime.MemProfileRate, the only write it ever makes to a process; the profiles cover allocations from then on"

// hostName names a watch session after the URL's host and port.
func hostName(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "watch"
}

// untilConfirmedMax bounds a watch --until-confirmed given no --duration.
const untilConfirmedMax = 10 * time.Minute

// settledCheck returns the check of watch --until-confirmed: it diagnoses the session so far
// and is done when a problem is confirmed and nothing else is suspected, or when nothing is
// found over diagnose.CleanWindow and nothing could be judged by watching longer
// (diagnose.Diagnosis.Settled: a growth of memory in a process that may still be warming up
// waits for CleanWindow too). Done, it sets at to the end of the evidence it judged: the
// report is of that verdict.
func settledCheck(dir string, budget uint64, at *time.Time) func() recorder.Look {
	return func() recorder.Look {
		s, err := session.Open(dir)
		if err != nil {
			return recorder.Look{}
		}
		d, ev, err := diagnoseSession(s, budget)
		if err != nil {
			return recorder.Look{}
		}
		// The watch has covered the time since it started, though its last reading may be a
		// sample old: a clean window is reached at the tick, as a look at that time would see.
		if !s.Manifest.Start.IsZero() {
			d.Window.Seconds = max(d.Window.Seconds, time.Since(s.Manifest.Start).Seconds())
		}
		st := d.Settled(ev.Target.Started)
		if st.Done {
			*at = ev.End
		}
		return recorder.Look{Done: st.Done, Why: st.Why, AwaitsGC: d.AwaitsGC()}
	}
}
