package recorder

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/session"
)

// Config is what a recording needs. Zero durations take the defaults below.
type Config struct {
	Mode     string        // "run", "watch" or "demo", recorded in the manifest
	Out      string        // session directory
	Duration time.Duration // 0 = until ctx is done or the target exits
	Interval time.Duration // between profile snapshots; default 10s
	Sample   time.Duration // between metric samples; default 1s
	// GoroutineTextEvery takes goroutine?debug=1 every that many snapshots (the last of each
	// run of that many: not with the first, whose goroutine profile says the same), and with
	// the final one; default 6. Each is taken with a goroutine profile from pprof only.
	GoroutineTextEvery int
	PprofURL           string // explicit pprof base URL ("" = detect)
	MemoryBudget       uint64 // bytes; 0 = the cgroup limit, else unknown
	Command            []string
	Stdout, Stderr     io.Writer     // run: where the program's own output goes
	ShowGCTrace        bool          // run: also show the runtime trace lines
	Grace              time.Duration // run: SIGINT, then SIGKILL after this; default 10s
	// Env is set in the program's environment (run), as KEY=value, over memdoctor's own:
	// tune runs the program under GOGC and GOMEMLIMIT settings this way.
	Env []string
	// Load is a shell command (sh -c) that drives load at the program (run): it starts once
	// the target is ready (its pprof endpoint found, or LoadWait after the Go program was
	// found when it serves none) and is stopped (SIGINT, then SIGKILL) before the program is.
	Load string
	// LoadWait is how long after the Go target is found the load starts when no pprof
	// endpoint tells that it is serving; default 3s.
	LoadWait time.Duration
	// Abort, when closed, stops the recording at once: the program's process group (run) is
	// killed with SIGKILL without waiting for Grace, no final snapshot is taken, and the
	// session is closed. The context given to Run or Watch asks for the graceful stop.
	Abort   <-chan struct{}
	Version string // memdoctor's version, for the manifest
	Flags   map[string]string
	Logger  *slog.Logger
	// OnStatus is called about once per Sample with the live figures.
	OnStatus func(Status)
	FS       procfs.FS
	// SessionFS is where the session is written; nil means the operating system's files.
	SessionFS session.FS
	// RestartGrace is how long watch waits for a service that went away to answer again
	// (restarted on the same address) before the session ends; default 30s.
	RestartGrace time.Duration
	// Token is the bearer token for a memdoctor agent's endpoints (watch); "" = none.
	Token string
	// Settled, when set, looks at the session so far, a few samples after the start and then
	// every Interval (watch --until-confirmed): the watch ends once the look is Done (nothing
	// left to confirm), and asks the service for a GC when the look finds a verdict that a
	// reading of the live heap now would settle (Look.AwaitsGC, within RequestGC).
	Settled func() Look
	// RequestGC is the most CPU one GC that a look asks of the service may cost it, estimated
	// from its live heap (at gcMarkRate: 100ms is about a 100 MiB heap); a heap whose GC would
	// cost more is left to its own GC. 0 never asks (DefaultRequestGC is the flag's default).
	RequestGC time.Duration
	// Holders, when set, is called once the recording is over, before the session is closed
	// and (run, demo) before the program is stopped: with the target's PID (0 when it is not
	// a local process) and whether it still runs (false when it exited on its own). It reads
	// who holds a confirmed heap leak while the target can still be read, and saves it in the
	// session (internal/cli diagnoses the session so far to know). What it returns is counted
	// in the manifest's attempts under holders.Attempt: nil for a reading made, its error for
	// one that could not be made; ErrNoHolders when there was nothing to read. A second stop
	// signal (Abort) cancels its context.
	Holders func(ctx context.Context, pid int, running bool) error
	// Source is where watch records from: SourceAuto ("" too: pprof, an agent, or both),
	// SourcePprof (net/http/pprof only; an embedded agent is not probed) or SourceAgent
	// (the agent only; watch fails without one).
	Source string
	// LeakCheckEvery is the longest time between two goroutineleak profile fetches (each
	// costs the target a GC cycle with leak detection); 0 = the default, 2m; negative = never.
	LeakCheckEvery time.Duration
	leakMinGap     time.Duration // tests shorten it; default leakMinGap
	leakCostShare  float64       // tests turn it off (< 0); default leakCostShare
	// PID is the local process whose /proc watch samples; 0 = the one listening on the URL's
	// port, when the URL is on this machine.
	PID int
	// EnableHeapProfiling lets memdoctor turn on the heap profiling of a target read from its
	// memory (SourceMemory) when it is off (a program that links no profiling): it writes the
	// default rate into the target's runtime.MemProfileRate, the only write it ever makes to
	// a process.
	EnableHeapProfiling bool
	// ReadMemory lets watch read a local service it watches over pprof from its memory too
	// (Linux, with permission to trace it): the heap profile and the runtime's figures cost
	// the service nothing that way, where pprof serves them with its own CPU, allocations and
	// a stop-the-world for MemStats; the goroutine stacks too when a stop of the service to
	// read them would last no longer than StacksStop. Only for a process whose command line is
	// the one its pprof serves (the service itself, not a proxy).
	ReadMemory bool
	// StacksStop bounds how long watch may stop a service it reads from its memory beside pprof
	// to read its goroutines' stacks there: the stop is predicted from the goroutine count, and
	// one that lasted longer hands the stacks to pprof for the rest of the session. 0 (the
	// default) or negative: never stop it; the stacks come from pprof, and memdoctor keeps
	// none of the executable's debugging information once the runtime's structures are found.
	StacksStop time.Duration
}

// Sources of a watch.
const (
	SourceAuto  = "auto"
	SourcePprof = "pprof"
	SourceAgent = "agent"
	// SourceMemory reads a local Go process's heap profile, runtime figures and goroutines
	// from its memory (Linux, with permission to trace it): for a process that serves
	// neither pprof nor an agent. Watch by PID falls back to it; run when no pprof endpoint
	// appears.
	SourceMemory = "memory"
)

// DefaultLeakCheckEvery is the default of Config.LeakCheckEvery.
const DefaultLeakCheckEvery = 2 * time.Minute

// Status is the live status of a recording.
type Status struct {
	Elapsed            time.Duration
	PID                int
	Target             string
	RSSBytes           uint64
	HeapBytes          uint64 // heap in use (objects) at the last reading
	GCPerSecond        float64
	HeapSnapshots      int
	GoroutineSnapshots int
	// LeakSnapshots counts the goroutineleak profiles stored.
	LeakSnapshots int
	// Profiles is true once a pprof endpoint or an agent supplies profiles.
	Profiles bool
}

// Result says how a recording ended.
type Result struct {
	Dir    string
	Status string // a session.Status* value
	Detail string
	// TargetExit is the exit code of the program (run), -1 when it was killed or unknown.
	TargetExit int
}

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = 10 * time.Second
	}
	if c.Sample <= 0 {
		c.Sample = time.Second
	}
	if c.LeakCheckEvery == 0 {
		c.LeakCheckEvery = DefaultLeakCheckEvery
	}
	if c.leakCostShare == 0 {
		c.leakCostShare = leakCostShare
	}
	if c.leakMinGap <= 0 {
		c.leakMinGap = leakMinGap
	}
	if c.Source == "" {
		c.Source = SourceAuto
	}
	if c.GoroutineTextEvery <= 0 {
		c.GoroutineTextEvery = 6
	}
	if c.LoadWait <= 0 {
		c.LoadWait = 3 * time.Second
	}
	if c.RestartGrace <= 0 {
		c.RestartGrace = 30 * time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 10 * time.Second
	}
	if c.SessionFS == nil {
		c.SessionFS = session.OSFS{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
}
