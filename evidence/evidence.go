package evidence

import (
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/session"
)

// Evidence is everything observed about one service over one window, as canonical series.
// Every source is mapped here once; rules read nothing else. A series is empty when nothing
// measured it, and Gaps says why for the quantities the rules need.
type Evidence struct {
	Start, End time.Time
	// Mode says what collected it: "run", "watch", "demo", "agent", "profiles" or
	// "prometheus".
	Mode   string
	Target Target
	// Budget is what the service may use (0 = unknown); BudgetSource says where it came
	// from: "flag", "cgroup", "option" or "".
	Budget       uint64
	BudgetSource string
	CgroupLimit  uint64 // 0 = none or unknown
	Session      string // the session directory, "" for other sources
	// Status is the session's (session.Status*: "complete", "target-exited", ...; "" for
	// other sources) and Command the command memdoctor run started, if it did.
	Status  string
	Command []string
	// Holders is who keeps the heap's objects alive, when memdoctor read it from the target,
	// or why it did not (sessions only).
	Holders Holders
	// Source: CallReaching reads the program's source where it is on disk (Options.Source).
	Source bool

	// Memory as the kernel counts it.
	RSS, HWM, RSSAnon, RSSFile, LazyFree Series
	TreeRSS                              Series // the whole process tree memdoctor run started
	TreeProcs                            int    // processes in that tree at its peak
	ProcessCPU                           Series // counter: CPU seconds (user + system) the process used
	CgroupUsage                          Series
	// OOMKills is the cgroup's oom_kill count at its highest reading (since the cgroup was
	// made); OOMKillsInWindow is how much it rose between the window's first reading and
	// then: kills the window saw happen (a reading after the target ended included).
	OOMKills, OOMKillsInWindow uint64

	// The Go runtime's memory.
	Live Series // the heap marked live by the last GC
	// LiveSeen is, when Live comes from heap profiles, when the heap its last reading shows
	// was most likely measured, when that is earlier than the reading's own time (zero
	// otherwise). The runtime publishes a cycle's heap profile one cycle late: a profile
	// shows the heap as the GC before the last one left it. When profiles that repeat their
	// predecessor prove that GCs ran less often than profiles were taken, that GC completed
	// between the fetches of the two distinct profiles before: the heap's last stretch went
	// unseen.
	LiveSeen        time.Time
	HeapInUse       Series // heap objects: live plus garbage not yet freed (MemStats HeapAlloc)
	HeapAtGC        Series // the heap when each GC cycle started: the tops of the sawtooth
	HeapGoal        Series
	HeapFree        Series // free heap pages the runtime retains for reuse
	RuntimeResident Series // the most the runtime can have resident: total - heap/released
	Stacks          Series // goroutine stacks

	Goroutines Series
	// Leaked counts the goroutines the runtime's leak detector proved leaked (the
	// goroutineleak profile, or its count on the pprof index page).
	Leaked Series
	// LeakProfileServed is true when the target serves the goroutineleak profile.
	LeakProfileServed bool

	// Cumulative counters.
	GCCycles, GCForced Series // forced cycles (runtime.GC, leak checks) count in both
	GCCPU, GCAssist    Series // CPU seconds; idle-priority marking is not counted
	// AvailableCPU is GOMAXPROCS x wall time, as CPU seconds: what gctrace's % divides by.
	AvailableCPU             Series
	AllocBytes, AllocObjects Series
	// SchedRun and SchedWait count the seconds the process's threads ran on a CPU and waited,
	// runnable, for one (/proc schedstat). The Go runtime's CPU figures count both (see
	// Contention).
	SchedRun, SchedWait Series

	// Parts of resident memory, where a Go reading and a /proc reading were taken close
	// enough in time to split it (within MaxSkew).
	NonGo, NonGoShare Series // anonymous memory the runtime does not account for
	// Retained is free heap kept beyond the GC's headroom (goal - heap in use), plus pages
	// released but still resident (MADV_FREE).
	Retained, RetainedShare Series
	ReleasedResident        Series // released with MADV_FREE, not yet reclaimed (LazyFree)
	Aligned                 int    // how many such readings
	// Peak and Latest split memory at the RSS peak and at the last reading; Peak's Go rows
	// are empty when no Go reading was close enough (PeakSkew says how far the nearest was).
	Peak, Latest *breakdown.At
	PeakSkew     time.Duration
	// Splits is memory split over time, at the aligned readings (or, for a process whose
	// /proc could not be read, at the Go readings alone), in time order; past 4096 time
	// slices, each keeps its splits with the lowest and the highest resident memory.
	Splits []breakdown.At

	Pacer Pacer

	// Snapshots, in time order.
	Heaps, GoroutineSnaps, LeakSnaps []Snapshot

	// Restarts are the times the process was seen to start again (counters reset there).
	Restarts []time.Time
	// Samples and GCLines count what the source held.
	Samples, GCLines int

	// Gaps says, for a quantity, why it could not be measured ("goroutines": "no pprof
	// endpoint and no agent"). Rules quote it when they cannot judge.
	Gaps map[string]string
	// Notes are facts about the data a reader should know: what was missing, skipped or
	// estimated.
	Notes []string

	profiles    *store
	build       *sessionBuild // what AddGCCycle and Finish add to evidence built with New
	assistsOnce sync.Once
	assists     *Assists
}

// Target describes the observed service: the session's manifest says it (session.Target,
// the one description of a target, which the recorder and the agent write); other sources
// fill what they know of it.
type Target = session.Target

// Pacer is what the GC pacer model needs, as last observed.
type Pacer struct {
	GOGC        float64 // percent; < 0 = off; 0 = unknown
	GOMemLimit  float64 // bytes; 0 = none or unknown
	GOMAXPROCS  int     // 0 = unknown
	ScanBytes   float64 // median stacks + globals the GC scans
	NonHeap     float64 // the runtime's memory outside the heap: stacks, metadata, other
	Outside     float64 // resident memory outside Go: non-Go and files
	HasGoMemory bool    // a Go reading was seen (NonHeap is measured)
}

// Snapshot is one stored profile.
type Snapshot struct {
	Kind  string // session.KindHeap, KindGoroutine or KindGoroutineLeak
	T     time.Time
	Label string // "" for periodic snapshots; see Role
	Path  string
}

// Role is what the snapshot was taken for (its label read).
func (s Snapshot) Role() session.Role { return session.RoleOf(s.Label) }

// Periodic reports a snapshot taken on a schedule (not around an event).
func (s Snapshot) Periodic() bool { return s.Role() == session.RolePeriodic }

// Seconds is the window's length.
func (ev *Evidence) Seconds() float64 { return ev.End.Sub(ev.Start).Seconds() }

// Window is the window's length.
func (ev *Evidence) Window() time.Duration { return ev.End.Sub(ev.Start) }

// PeriodicHeaps returns the periodic heap snapshots.
func (ev *Evidence) PeriodicHeaps() []Snapshot {
	var out []Snapshot
	for _, s := range ev.Heaps {
		if s.Periodic() {
			out = append(out, s)
		}
	}
	return out
}

// Gap records why a quantity could not be measured (the first reason given wins).
func (ev *Evidence) Gap(quantity, why string) {
	if ev.Gaps == nil {
		ev.Gaps = map[string]string{}
	}
	if _, ok := ev.Gaps[quantity]; !ok {
		ev.Gaps[quantity] = why
	}
}

// kindOf maps a stored profile kind to a snapshot kind (goroutine text dumps are not kept).
func kindOf(k string) (string, bool) {
	switch k {
	case session.KindHeap, session.KindGoroutine:
		return k, true
	case kindGoroutineLeak:
		return k, true
	}
	return "", false
}

// kindGoroutineLeak is the stored kind of goroutineleak profiles.
const kindGoroutineLeak = session.KindGoroutineLeak

// KindGoroutineLeak is the snapshot kind of goroutineleak profiles.
const KindGoroutineLeak = kindGoroutineLeak

// Contention is the share of the time the process's threads were runnable that they spent
// waiting for a CPU, over the window (0 when unknown or when they never waited). The Go
// runtime's own CPU figures (gctrace's, runtime/metrics', MemStats' GC fraction) measure the
// wall-clock time a goroutine holds a P, so on a busy machine they run high by 1/(1 -
// Contention).
func (ev *Evidence) Contention() float64 {
	run, wait := ev.SchedRun.Increase(), ev.SchedWait.Increase()
	if ev.SchedRun.Len() < 2 || run <= 0 || wait < 0 {
		return 0
	}
	return wait / (run + wait)
}
