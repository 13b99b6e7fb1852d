package agent

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/agent/wire"
)

// Option configures an Agent. An invalid value makes Start fail with an error naming it.
type Option func(*config)

// config is every setting of an Agent, defaults applied.
type config struct {
	sampleInterval  time.Duration
	history         time.Duration
	profileInterval time.Duration
	profileRounds   int
	keptEvents      int
	profileBytes    int64

	heapJumpRatio    float64
	heapJumpBytes    uint64
	rssThreshold     uint64
	rssThresholdSet  bool
	goroutineGrowth  int
	goroutineRatio   float64
	leakCheck        time.Duration
	cooldown         time.Duration
	flightRecorder   bool
	flightMinAge     time.Duration
	flightMaxBytes   uint64
	afterWindow      time.Duration
	keptTraces       int
	memLimitRatio    float64
	budget           uint64
	pressureHigh     float64
	pressureCritical float64
	pressureFunc     func(Pressure)
	hardLimit        float64
	exitDir          string
	exitHold         time.Duration
	exitStatus       int
	exitFunc         func(int) // os.Exit; tests replace it
	token            string
	logger           *slog.Logger

	// Test hooks: where /proc and the cgroup are read, and whose.
	fs  procfs.FS
	pid int

	errs []error
}

// Defaults.
const (
	DefaultSampleInterval  = time.Second
	DefaultHistory         = time.Hour
	DefaultProfileInterval = 15 * time.Second
	DefaultProfileRounds   = 8
	DefaultKeptEvents      = 8
	DefaultProfileBytes    = 32 << 20
	DefaultHeapJumpRatio   = 0.5
	DefaultHeapJumpBytes   = 16 << 20
	DefaultGoroutineGrowth = 1000
	DefaultGoroutineRatio  = 0.5
	DefaultCooldown        = 5 * time.Minute
	DefaultFlightMinAge    = 10 * time.Second
	DefaultFlightMaxBytes  = 8 << 20
	DefaultAfterWindow     = 10 * time.Second
	DefaultKeptTraces      = 2
	DefaultPressureHigh    = 0.80
	DefaultPressureCrit    = 0.95
	DefaultExitHold        = 10 * time.Second
	// DefaultExitStatus is the exit status of the guard's exit action: 12, the value of
	// ENOMEM, so that it cannot be mistaken for a crash (2), a signal (128+N) or the kernel's
	// OOM kill (137).
	DefaultExitStatus = 12
)

func defaultConfig() config {
	return config{
		sampleInterval:   DefaultSampleInterval,
		history:          DefaultHistory,
		profileInterval:  DefaultProfileInterval,
		profileRounds:    DefaultProfileRounds,
		keptEvents:       DefaultKeptEvents,
		profileBytes:     DefaultProfileBytes,
		heapJumpRatio:    DefaultHeapJumpRatio,
		heapJumpBytes:    DefaultHeapJumpBytes,
		goroutineGrowth:  DefaultGoroutineGrowth,
		goroutineRatio:   DefaultGoroutineRatio,
		leakCheck:        DefaultLeakCheckInterval,
		cooldown:         DefaultCooldown,
		flightMinAge:     DefaultFlightMinAge,
		flightMaxBytes:   DefaultFlightMaxBytes,
		afterWindow:      DefaultAfterWindow,
		keptTraces:       DefaultKeptTraces,
		pressureHigh:     DefaultPressureHigh,
		pressureCritical: DefaultPressureCrit,
		exitHold:         DefaultExitHold,
		exitStatus:       DefaultExitStatus,
		exitFunc:         os.Exit,
		pid:              os.Getpid(),
	}
}

func (c *config) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// WithSampleInterval sets how often the agent samples runtime/metrics and /proc/self.
// Default 1s; at least 100ms.
func WithSampleInterval(d time.Duration) Option {
	return func(c *config) {
		if d < 100*time.Millisecond {
			c.errorf("agent.WithSampleInterval(%v): want at least 100ms", d)
			return
		}
		c.sampleInterval = d
	}
}

// WithHistory sets how much sample history the ring keeps. Default one hour; the ring is
// allocated once at Start, outside the Go heap where the system allows (about 420 bytes a
// sample: 1.5 MB for an hour at 1s, resident only as it fills). At least one sample
// interval, at most a week.
func WithHistory(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 || d > 7*24*time.Hour {
			c.errorf("agent.WithHistory(%v): want more than 0 and at most a week", d)
			return
		}
		c.history = d
	}
}

// WithProfileInterval sets how often a periodic heap and goroutine profile is taken.
// Default 15s; at least 1s. The agent keeps the last rounds of them (WithProfileRounds).
func WithProfileInterval(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second {
			c.errorf("agent.WithProfileInterval(%v): want at least 1s", d)
			return
		}
		c.profileInterval = d
	}
}

// WithProfileRounds sets how many periodic rounds (a heap and a goroutine profile each) the
// ring keeps. Default 8 (two minutes at the default interval); 2 to 1000.
func WithProfileRounds(n int) Option {
	return func(c *config) {
		if n < 2 || n > 1000 {
			c.errorf("agent.WithProfileRounds(%d): want 2 to 1000", n)
			return
		}
		c.profileRounds = n
	}
}

// WithKeptEvents sets how many trigger events keep their before/after profiles beyond the
// ring's rotation. Default 8; the oldest event's profiles go first. 1 to 1000.
func WithKeptEvents(n int) Option {
	return func(c *config) {
		if n < 1 || n > 1000 {
			c.errorf("agent.WithKeptEvents(%d): want 1 to 1000", n)
			return
		}
		c.keptEvents = n
	}
}

// WithProfileBytes caps the bytes of all the profiles the agent keeps, periodic and kept
// together. Default 32 MiB; at least 1 MiB. Over the cap, the oldest periodic profiles go
// first, then the oldest events' profiles.
func WithProfileBytes(n int64) Option {
	return func(c *config) {
		if n < 1<<20 {
			c.errorf("agent.WithProfileBytes(%d): want at least 1 MiB", n)
			return
		}
		c.profileBytes = n
	}
}

// WithHeapJump sets the heap-jump trigger: it fires when the live heap or the heap goal at a
// GC is at least ratio above the lowest of the last minute's GCs and at least minBytes more.
// Default 0.5 (50%) and 16 MiB. ratio 0 disables the trigger.
func WithHeapJump(ratio float64, minBytes uint64) Option {
	return func(c *config) {
		if ratio < 0 {
			c.errorf("agent.WithHeapJump(%v, %d): the ratio must not be negative", ratio, minBytes)
			return
		}
		c.heapJumpRatio, c.heapJumpBytes = ratio, minBytes
	}
}

// WithRSSThreshold sets the rss-threshold trigger: it fires when the process's RSS rises
// through n bytes. Default: off, unless a budget is known (WithBudget or a cgroup limit),
// where it is the high pressure threshold of the budget. 0 disables it.
func WithRSSThreshold(n uint64) Option {
	return func(c *config) { c.rssThreshold, c.rssThresholdSet = n, true }
}

// WithGoroutineGrowth sets the goroutine-growth trigger: it fires when the goroutine count is
// at least n more and ratio above the lowest of the last minute. Default 1000 and 0.5 (50%).
// n 0 disables it.
func WithGoroutineGrowth(n int, ratio float64) Option {
	return func(c *config) {
		if n < 0 || ratio < 0 {
			c.errorf("agent.WithGoroutineGrowth(%d, %v): want values >= 0", n, ratio)
			return
		}
		c.goroutineGrowth, c.goroutineRatio = n, ratio
	}
}

// WithLeakCheckInterval sets how often the agent takes a goroutineleak profile, when the
// runtime has one (Go 1.27; Go 1.26 built with GOEXPERIMENT=goroutineleakprofile; older
// runtimes have none and the agent takes none). The profile holds only the goroutines the GC
// proved blocked forever on channels, mutexes or conditions that no running goroutine can
// reach: a leak proven from one snapshot, with the code that leaked. The agent lists them
// with kind "goroutineleak" (the last 4 are kept).
//
// Each one costs the service a full GC cycle with leak detection (forced, so it shows in
// /gc/cycles/forced), whose marking cost grows with the number of goroutines, worse than
// linearly in the worst case; the Go blog suggests every few hours in production. The
// default, 10 minutes, is conservative still: one extra cycle per 10 minutes is less than
// the runtime forces by itself in a quiet program (one when none has run for 2 minutes),
// and a leak is proven within minutes, not hours. Besides the interval, the agent takes one
// at Start and one when the goroutine
// count has climbed since the last one by the goroutine-growth trigger's margins
// (WithGoroutineGrowth: 1000 goroutines and 50% by default), or when that trigger fires;
// never two within a minute. 0 turns the profile off; otherwise at least one minute.
func WithLeakCheckInterval(d time.Duration) Option {
	return func(c *config) {
		if d != 0 && d < leakMinGap {
			c.errorf("agent.WithLeakCheckInterval(%v): want 0 (off) or at least %v", d, leakMinGap)
			return
		}
		c.leakCheck = d
	}
}

// WithCooldown sets the least time between two firings of the same trigger. Default 5m;
// at least 1s.
func WithCooldown(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second {
			c.errorf("agent.WithCooldown(%v): want at least 1s", d)
			return
		}
		c.cooldown = d
	}
}

// WithFlightRecorder keeps a runtime/trace flight recorder running (Go 1.25+) and saves a
// snapshot of it with each trigger's "after" profiles (see WithAfterWindow). Default off: tracing costs a few percent of CPU.
// minAge (default 10s) and maxBytes (default 8 MiB) bound the window it keeps; zero values
// take the defaults. A snapshot over 64 MiB (session.MaxTraceBytes, what a memdoctor session
// stores) is dropped with a warning.
func WithFlightRecorder(minAge time.Duration, maxBytes uint64) Option {
	return func(c *config) {
		if minAge < 0 {
			c.errorf("agent.WithFlightRecorder(%v, %d): minAge must not be negative", minAge, maxBytes)
			return
		}
		c.flightRecorder = true
		if minAge > 0 {
			c.flightMinAge = minAge
		}
		if maxBytes > 0 {
			c.flightMaxBytes = maxBytes
		}
	}
}

// WithAfterWindow bounds how long after a trigger the "after" profiles (and the flight
// recorder's snapshot) are taken. They are taken once the rise has stopped (the first GC
// whose heap is not above the previous one for heap-jump, the first sample whose RSS or
// goroutine count is not above the previous one for the others) and the GCs that publish
// the allocations made until then have run (a heap profile counts an allocation at the end
// of the second GC after it), so that they hold what the spike allocated. Default 10s; 0
// takes them at the trigger.
func WithAfterWindow(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.errorf("agent.WithAfterWindow(%v): must not be negative", d)
			return
		}
		c.afterWindow = d
	}
}

// WithKeptTraces sets how many flight-recorder snapshots the agent keeps. Default 2; each
// is up to the flight recorder's maxBytes. 1 to 100.
func WithKeptTraces(n int) Option {
	return func(c *config) {
		if n < 1 || n > 100 {
			c.errorf("agent.WithKeptTraces(%d): want 1 to 100", n)
			return
		}
		c.keptTraces = n
	}
}

// WithMemoryLimitFromCgroup sets GOMEMLIMIT at Start to ratio times the process's effective
// cgroup memory limit (v1 or v2, parent cgroups included), unless the user already set
// GOMEMLIMIT (in the environment or with debug.SetMemoryLimit). Stop restores the previous
// limit. Default off. ratio must be in (0, 1].
func WithMemoryLimitFromCgroup(ratio float64) Option {
	return func(c *config) {
		if ratio <= 0 || ratio > 1 {
			c.errorf("agent.WithMemoryLimitFromCgroup(%v): want a ratio in (0, 1]", ratio)
			return
		}
		c.memLimitRatio = ratio
	}
}

// WithBudget sets the memory the service may use, in bytes, which the guard's pressure levels
// are fractions of. Default: the effective cgroup memory limit, else none (the guard is then
// idle).
func WithBudget(n uint64) Option {
	return func(c *config) { c.budget = n }
}

// WithPressureThresholds sets the guard's levels as fractions of the budget: PressureHigh at
// high (default 0.80) and PressureCritical at critical (default 0.95). A level is left when
// usage falls 5% of the budget below its threshold.
func WithPressureThresholds(high, critical float64) Option {
	return func(c *config) {
		if high <= 0 || critical < high || critical > 2 {
			c.errorf("agent.WithPressureThresholds(%v, %v): want 0 < high <= critical <= 2", high, critical)
			return
		}
		c.pressureHigh, c.pressureCritical = high, critical
	}
}

// WithPressureFunc calls fn each time the pressure level changes. fn runs on a goroutine of
// its own: a slow fn delays only later calls, which then carry the latest level. A panic in
// fn is recovered and logged. No call starts once Stop is called, and Stop waits for a call
// in progress only as its context allows (see Agent.Stop). Default none.
func WithPressureFunc(fn func(Pressure)) Option {
	return func(c *config) { c.pressureFunc = fn }
}

// WithExitOnHardLimit enables the guard's exit action: when usage stays at or above the hard
// limit (WithHardLimit) for hold (default 10s when 0), the agent writes its profiles, its
// metrics history, a manifest and a diagnosis.json into a new session directory under dir,
// logs one line at Error level and exits the process with the exit status (WithExitStatus,
// default 12). Default off. It needs a budget (WithBudget or a cgroup limit).
func WithExitOnHardLimit(dir string, hold time.Duration) Option {
	return func(c *config) {
		if dir == "" || hold < 0 {
			c.errorf("agent.WithExitOnHardLimit(%q, %v): want a directory and a hold >= 0", dir, hold)
			return
		}
		c.exitDir = dir
		if hold > 0 {
			c.exitHold = hold
		}
	}
}

// WithHardLimit sets the hard limit of the exit action as a fraction of the budget. Default:
// the critical pressure threshold.
func WithHardLimit(fraction float64) Option {
	return func(c *config) {
		if fraction <= 0 || fraction > 2 {
			c.errorf("agent.WithHardLimit(%v): want a fraction in (0, 2]", fraction)
			return
		}
		c.hardLimit = fraction
	}
}

// WithExitStatus sets the exit status of the guard's exit action. Default 12 (ENOMEM).
func WithExitStatus(code int) Option {
	return func(c *config) {
		if code < 1 || code > 125 {
			c.errorf("agent.WithExitStatus(%d): want 1 to 125", code)
			return
		}
		c.exitStatus = code
	}
}

// WithToken makes Handler require "Authorization: Bearer <token>" on every request. The
// token must pass wire.CheckToken (at least 16 printable ASCII characters, no space), the
// rule memdoctor serve applies too.
// Default none: Handler then serves anyone who reaches it, like net/http/pprof, and
// ListenAndServe refuses any address but loopback.
func WithToken(token string) Option {
	return func(c *config) {
		if err := wire.CheckToken(token); err != nil {
			c.errorf("agent.WithToken: %w", err)
			return
		}
		c.token = token
	}
}

// WithLogger sets where the agent logs. Default: nowhere. A panic in the logger's handler is
// recovered and the record dropped: a broken logger cannot take the host down.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// withFS makes the agent read /proc and the cgroup below root as process pid (tests).
func withFS(fs procfs.FS, pid int) Option {
	return func(c *config) { c.fs, c.pid = fs, pid }
}
