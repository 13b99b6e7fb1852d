package record

import "time"

// Format is the manifest's format identifier. Readers accept any "memdoctor/session/v1".
const Format = "memdoctor/session/v1"

// File names inside a session directory.
const (
	ManifestFile  = "manifest.json"
	MetricsFile   = "metrics.jsonl"
	GCTraceFile   = "gctrace.log"
	DiagnosisFile = "diagnosis.json"
	ProfilesDir   = "profiles"
)

// Status values of a manifest.
const (
	StatusRunning      = "running"       // the collector is (or was, if killed) still writing
	StatusComplete     = "complete"      // the planned duration ended
	StatusInterrupted  = "interrupted"   // stopped by the user (Ctrl-C)
	StatusTargetExited = "target-exited" // the target ended by itself
	StatusFailed       = "failed"        // collection stopped on an error (see StatusDetail)
)

// Manifest describes a session.
type Manifest struct {
	Format           string            `json:"format"`
	MemdoctorVersion string            `json:"memdoctor_version"`
	Mode             string            `json:"mode"` // run, watch, demo, agent
	Status           string            `json:"status"`
	StatusDetail     string            `json:"status_detail,omitempty"`
	Target           Target            `json:"target"`
	Command          []string          `json:"command,omitempty"`
	Start            time.Time         `json:"start"`
	End              time.Time         `json:"end,omitzero"`
	Updated          time.Time         `json:"updated"`
	Flags            map[string]string `json:"flags,omitempty"`
	// MemoryBudgetBytes is what the service may use (0 = unknown); MemoryBudgetSource says
	// where it came from: "flag", "cgroup" or "".
	MemoryBudgetBytes  uint64 `json:"memory_budget_bytes,omitempty"`
	MemoryBudgetSource string `json:"memory_budget_source,omitempty"`
	// GCTraceBase is the wall-clock time at which the target's runtime started: the "@Ns" of
	// each gctrace line counts from it.
	GCTraceBase time.Time `json:"gctrace_base,omitzero"`
	// Notes are facts about the collection a reader should know ("no pprof endpoint found").
	Notes []string `json:"notes,omitempty"`
	// Attempts says, for each kind of data the collector tried to read, how often it tried, how
	// often it succeeded, and the last error. Keys: the Attempt* constants ("heap",
	// "goroutine", "goroutine-text", "memstats", "proc", "cgroup", "agent-metrics",
	// "agent-profiles"); others may be added. A kind that is absent was never tried. The
	// collector rewrites it every few seconds and at the end, so a killed collector leaves the
	// counts of its last seconds out.
	Attempts map[string]Attempt `json:"attempts,omitempty"`
	// Restarts are the times at which the target was seen to restart (watch follows a
	// service that restarts on the same address). Cumulative counters (GC cycles, allocated
	// bytes, CPU) start again from zero after each, and the PID may change.
	Restarts []time.Time `json:"restarts,omitempty"`
	// Costs says, for each kind of data the collector read from the target and each place it
	// read it from, what those reads cost the target (its CPU, its stops); one entry per kind
	// and source, in the order first read. Rewritten with Attempts.
	Costs []Cost `json:"costs,omitempty"`
}

// Cost is what reading one kind of data from one source cost the target over a collection
// (Manifest.Costs): the target's work and stops only, never memdoctor's own.
type Cost struct {
	// Data is the kind of data: "heap", "goroutine" or "goroutine-text" (as in Attempts),
	// DataFigures (the runtime's memory statistics and GC figures: the MemStats block of
	// heap?debug=1, or read from memory), DataIndex (the pprof index page's counts),
	// DataGoroutineLeak, DataHeapAfterGC or DataCmdline.
	Data string `json:"data"`
	// Source is where it was read: SourcePprof (the target's net/http/pprof, which serves each
	// request with its own CPU) or SourceMemory (its memory, through /proc/PID/mem: the kernel
	// copies it on memdoctor's behalf and the target runs nothing for it).
	Source string `json:"source"`
	// Reads counts the reads made, failed ones included.
	Reads int `json:"reads"`
	// TargetCPUSeconds is how long the target's threads ran while these reads were served,
	// summed (/proc/PID/task/*/schedstat before and after each request): serving them and
	// whatever else it ran meanwhile, an upper bound. Reads from memory cost it none (0).
	// CPUMeasured is false when that was not measured (its /proc was not read).
	TargetCPUSeconds float64 `json:"target_cpu_seconds"`
	CPUMeasured      bool    `json:"cpu_measured"`
	// Stops counts the times the collector stopped every thread of the target for these reads
	// (ptrace, to read goroutine stacks from memory); StoppedSeconds is their sum and
	// LongestStopSeconds the longest.
	Stops              int     `json:"stops,omitempty"`
	StoppedSeconds     float64 `json:"stopped_seconds,omitempty"`
	LongestStopSeconds float64 `json:"longest_stop_seconds,omitempty"`
	// Pauses counts the stop-the-world pauses the target's own runtime recorded while these
	// reads were served (its /sched/pauses/total histograms, read from its memory: a
	// runtime.ReadMemStats, a goroutine profile, a GC cycle); LongestPauseSeconds is the upper
	// bound of the longest one's histogram bucket. PausesMeasured is false when they were not
	// read (a target whose memory memdoctor does not read).
	Pauses              int     `json:"pauses,omitempty"`
	LongestPauseSeconds float64 `json:"longest_pause_seconds,omitempty"`
	PausesMeasured      bool    `json:"pauses_measured,omitempty"`
}

// Kinds of data and sources of a Cost, besides the Attempt* kinds.
const (
	DataFigures       = "figures"       // the runtime's memory statistics and GC figures
	DataIndex         = "index"         // the pprof index page: the goroutine count, the goroutineleak count
	DataGoroutineLeak = "goroutineleak" // goroutineleak profiles: each a GC cycle with leak detection in the target
	DataHeapAfterGC   = "heap-gc"       // heap profiles asked with gc=1: each a GC cycle in the target, for a reading of its live heap now
	DataCmdline       = "cmdline"       // the command line pprof serves: who the service is
	SourcePprof       = "pprof"         // the target's net/http/pprof
	SourceMemory      = "process-memory"
)

// Attempt counts the reads of one kind of data during a collection.
type Attempt struct {
	Tries     int    `json:"tries"`
	OK        int    `json:"ok"`
	LastError string `json:"last_error,omitempty"`
}

// Never reports whether the data was tried and never obtained.
func (a Attempt) Never() bool { return a.Tries > 0 && a.OK == 0 }

// MostlyFailed reports whether fewer than half of the tries succeeded.
func (a Attempt) MostlyFailed() bool { return a.Tries > 0 && 2*a.OK < a.Tries }

// Kinds of data counted in Manifest.Attempts.
const (
	AttemptHeap          = "heap"           // heap profiles (pprof)
	AttemptGoroutine     = "goroutine"      // goroutine profiles (pprof)
	AttemptGoroutineText = "goroutine-text" // goroutine?debug=1 dumps
	AttemptMemStats      = "memstats"       // the MemStats block of heap?debug=1
	AttemptProc          = "proc"           // /proc/PID readings
	AttemptCgroup        = "cgroup"         // memory cgroup readings
	AttemptAgentMetrics  = "agent-metrics"  // pulls of an agent's samples
	AttemptAgentProfiles = "agent-profiles" // listings and fetches of an agent's profiles
)

// DescribeAttempt names a kind of data (an Attempt* key) and its reads, for notes:
// ("heap profiles", "fetches").
func DescribeAttempt(kind string) (what, reads string) {
	switch kind {
	case AttemptHeap:
		return "heap profiles", "fetches"
	case AttemptGoroutine:
		return "goroutine profiles", "fetches"
	case AttemptGoroutineText:
		return "goroutine dumps (goroutine?debug=1)", "fetches"
	case AttemptMemStats:
		return "MemStats (heap?debug=1)", "fetches"
	case AttemptProc:
		return "/proc readings of the target", "reads"
	case AttemptCgroup:
		return "memory cgroup readings", "reads"
	case AttemptAgentMetrics:
		return "the agent's samples", "pulls"
	case AttemptAgentProfiles:
		return "the agent's profiles", "listings and fetches"
	}
	return kind, "reads"
}

// Target is the watched process or service.
type Target struct {
	PID       int      `json:"pid,omitempty"`
	Name      string   `json:"name,omitempty"`
	Exe       string   `json:"exe,omitempty"`
	Cmdline   []string `json:"cmdline,omitempty"`
	GoVersion string   `json:"go_version,omitempty"`
	// GoVersionSource is where GoVersion came from: "buildinfo", "agent", "".
	GoVersionSource string `json:"go_version_source,omitempty"`
	MainModule      string `json:"main_module,omitempty"`
	PprofURL        string `json:"pprof_url,omitempty"`
	AgentURL        string `json:"agent_url,omitempty"`
	// GODEBUG, GOGC and GOMEMLIMIT as set in the target's environment ("" = unset).
	GODEBUG    string `json:"godebug,omitempty"`
	GOGC       string `json:"gogc,omitempty"`
	GOMEMLIMIT string `json:"gomemlimit,omitempty"`
	GOMAXPROCS int    `json:"gomaxprocs,omitempty"`
	// Started is when the process started (from /proc): MemStats counts some figures since
	// then (GCCPUFraction), and they become counts over time with it.
	Started time.Time `json:"started,omitzero"`
	// Local is true when memdoctor could read the target's /proc.
	Local bool `json:"local"`
}

// Sample is one line of metrics.jsonl: what was measured at one instant. Each part is present
// only when its source was read at that instant.
type Sample struct {
	Time   time.Time    `json:"t"`
	Proc   *Proc        `json:"proc,omitempty"`
	Cgroup *Cgroup      `json:"cgroup,omitempty"`
	Go     *GoMem       `json:"go,omitempty"`
	Pprof  *PprofCounts `json:"pprof,omitempty"`
	Sched  *Sched       `json:"sched,omitempty"`
}

// Sched is how long the target's threads ran on a CPU and how long they waited, runnable,
// for one, since they started (/proc/PID/task/*/schedstat, summed). Go's own CPU figures
// (gctrace, runtime/metrics, MemStats' GC fraction) count wall-clock time while a goroutine
// holds a P, waiting threads included: on a busy machine they run high, and
// RunSeconds/(RunSeconds+WaitSeconds) over a window is the share of that time the threads
// really ran.
type Sched struct {
	RunSeconds  float64 `json:"run_seconds"`
	WaitSeconds float64 `json:"wait_seconds"`
	Tasks       int     `json:"tasks"` // threads read (at most 1024)
}

// PprofCounts are the counts the pprof index page lists at one instant. Reading them costs
// the target no stop-the-world: the goroutine count is runtime.NumGoroutine(), the
// goroutineleak count is the result of the last leak-detection cycle (reading it starts
// none). GoroutineLeak is -1 when the target does not serve the goroutineleak profile (Go
// 1.26 without GOEXPERIMENT=goroutineleakprofile, and older); 0 (absent from the JSON) when
// it serves it and the last detection cycle found no leak, or none has run yet.
type PprofCounts struct {
	Goroutines    int `json:"goroutines"`              // runtime.NumGoroutine()
	GoroutineLeak int `json:"goroutineleak,omitempty"` // leaked goroutines found by the last leak-detection cycle; -1 = the profile is not served
	Threads       int `json:"threadcreate,omitempty"`
	HeapRecords   int `json:"heap_records,omitempty"`
}

// Proc is the target's resident memory as the kernel sees it (/proc/PID/status, smaps_rollup).
type Proc struct {
	PID           int     `json:"pid"`
	RSSBytes      uint64  `json:"rss_bytes"`
	RSSAnonBytes  uint64  `json:"rss_anon_bytes"`
	RSSFileBytes  uint64  `json:"rss_file_bytes"`
	RSSShmemBytes uint64  `json:"rss_shmem_bytes,omitempty"`
	HWMBytes      uint64  `json:"hwm_bytes,omitempty"`
	LazyFreeBytes uint64  `json:"lazyfree_bytes"`
	Threads       int     `json:"threads,omitempty"`
	CPUSeconds    float64 `json:"cpu_seconds,omitempty"` // user+system since start
	// TreeRSSBytes and TreeProcs cover the whole process tree memdoctor started (run only).
	TreeRSSBytes uint64 `json:"tree_rss_bytes,omitempty"`
	TreeProcs    int    `json:"tree_procs,omitempty"`
}

// Cgroup is the memory cgroup of the target.
type Cgroup struct {
	Version         int    `json:"version"`
	LimitBytes      uint64 `json:"limit_bytes,omitempty"` // effective limit (parents included); 0 = none
	UsageBytes      uint64 `json:"usage_bytes"`
	WorkingSetBytes uint64 `json:"working_set_bytes,omitempty"`
	AnonBytes       uint64 `json:"anon_bytes,omitempty"`
	FileBytes       uint64 `json:"file_bytes,omitempty"`
	OOMKills        uint64 `json:"oom_kills,omitempty"`
}

// GoMem is the Go runtime's own account of its memory. Source says where it came from:
// "runtime/metrics" (exact, from an embedded agent) or "memstats" (the MemStats block of
// /debug/pprof/heap?debug=1). Cumulative fields count since the target started.
type GoMem struct {
	Source string `json:"source"`

	// The /memory/classes/* leaves, in bytes.
	HeapObjectsBytes  uint64 `json:"heap_objects_bytes"`
	HeapUnusedBytes   uint64 `json:"heap_unused_bytes"`
	HeapFreeBytes     uint64 `json:"heap_free_bytes"`
	HeapReleasedBytes uint64 `json:"heap_released_bytes"`
	HeapStacksBytes   uint64 `json:"heap_stacks_bytes"`
	OSStacksBytes     uint64 `json:"os_stacks_bytes"`
	MetadataBytes     uint64 `json:"metadata_bytes"`
	OtherBytes        uint64 `json:"other_bytes"` // profiling buckets + other
	TotalBytes        uint64 `json:"total_bytes"`

	// HeapLiveBytes is the heap marked live by the last GC (0 = not known from this source).
	HeapLiveBytes uint64 `json:"heap_live_bytes,omitempty"`
	HeapGoalBytes uint64 `json:"heap_goal_bytes,omitempty"`
	// Pacer inputs: scannable stack and globals bytes.
	StackScanBytes   uint64 `json:"stack_scan_bytes,omitempty"`
	GlobalsScanBytes uint64 `json:"globals_scan_bytes,omitempty"`

	AllocBytesTotal   uint64 `json:"alloc_bytes_total"`
	AllocObjectsTotal uint64 `json:"alloc_objects_total,omitempty"`
	GCCycles          uint64 `json:"gc_cycles"`
	GCForcedCycles    uint64 `json:"gc_forced_cycles,omitempty"`

	// GC CPU, cumulative CPU-seconds (runtime/metrics /cpu/classes/...). GCCPUFraction is the
	// MemStats figure when that is all there is.
	GCTotalSeconds  float64 `json:"gc_total_seconds,omitempty"`
	GCAssistSeconds float64 `json:"gc_assist_seconds,omitempty"`
	GCIdleSeconds   float64 `json:"gc_idle_seconds,omitempty"`
	GCPauseSeconds  float64 `json:"gc_pause_seconds,omitempty"`
	CPUTotalSeconds float64 `json:"cpu_total_seconds,omitempty"`
	GCCPUFraction   float64 `json:"gc_cpu_fraction,omitempty"`
	// LastGCUnixNano is when the last GC ended (MemStats' LastGC, nanoseconds since 1970): the
	// runtime computes GCCPUFraction at the end of each GC, so the fraction is of then.
	LastGCUnixNano    uint64  `json:"last_gc_unix_nano,omitempty"`
	PauseTotalSeconds float64 `json:"pause_total_seconds,omitempty"`

	Goroutines      int    `json:"goroutines,omitempty"`
	GOGC            int    `json:"gogc,omitempty"`             // percent; -1 = off; 0 = unknown
	GOMemLimitBytes uint64 `json:"gomemlimit_bytes,omitempty"` // 0 = unknown, math.MaxInt64 = unset
	GOMAXPROCS      int    `json:"gomaxprocs,omitempty"`
}

// RuntimeResident is the most the Go runtime can have resident: total - heap/released.
func (g *GoMem) RuntimeResident() uint64 {
	if g.TotalBytes < g.HeapReleasedBytes {
		return 0
	}
	return g.TotalBytes - g.HeapReleasedBytes
}

// Profile kinds stored in profiles/.
const (
	KindHeap          = "heap"
	KindGoroutine     = "goroutine"
	KindGoroutineText = "goroutine-text"
	// KindGoroutineLeak is the goroutineleak profile (Go 1.27; Go 1.26 with
	// GOEXPERIMENT=goroutineleakprofile): only the goroutines the GC proved blocked forever
	// on something no running goroutine can reach. Each snapshot cost the target one forced
	// GC cycle with leak detection.
	KindGoroutineLeak = "goroutineleak"
)

// LabelBeforeOOM marks the profiles a collector took at once, outside its interval, when the
// target's memory came within 10% of its limit and was rising: the last look at the heap
// before a possible OOM kill.
const LabelBeforeOOM = "before-oom"

// ProfileRef is one stored profile snapshot.
type ProfileRef struct {
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`
	// Label marks snapshots captured around an event ("before-heap-jump"); "" for periodic ones.
	Label string `json:"label,omitempty"`
	Path  string `json:"path"` // absolute, or relative to the session directory
}
