package procfs

import (
	"net/netip"
	"time"
)

// Status holds the fields of /proc/PID/status that memdoctor uses.
// Sizes are in bytes (the file reports kB). Kernel threads have no Vm* or Rss*
// lines; those fields are then zero.
type Status struct {
	Name    string // comm, with the kernel's \n and \\ escapes undone
	PID     int    // in the PID namespace of the /proc that was read
	PPID    int
	Threads int

	VmRSS, RssAnon, RssFile, RssShmem, VmHWM, VmSize uint64
}

// Rollup holds the fields of /proc/PID/smaps_rollup (Linux 4.14+) that
// memdoctor uses, in bytes. LazyFree is memory freed with MADV_FREE that the
// kernel has not reclaimed yet: it still counts in Rss.
type Rollup struct {
	Rss, Pss, Anonymous, LazyFree, AnonHugePages, Swap uint64
}

// Stat holds the fields of /proc/PID/stat that memdoctor uses.
type Stat struct {
	PID, PPID int
	Comm      string // raw: may contain spaces and ')'
	State     byte   // R, S, D, Z, T, t, X, I, ...
	// Flags are the kernel's flags of the process's main thread (PF_* in
	// include/linux/sched.h): Exiting reads them.
	Flags uint32

	// UTime and STime are the user and system CPU time, converted from
	// clock ticks at UserHZ (100 Hz).
	UTime, STime time.Duration

	// StartTime is the boot time (btime in /proc/stat, whole seconds) plus
	// the starttime field's ticks. btime is read once per Root and cached.
	StartTime time.Time

	NumThreads int
}

// pfExiting is the kernel's PF_EXITING: the thread is in its exit.
const pfExiting = 0x4

// Exiting says the process is ending: its main thread is in its exit, or it is a zombie or
// dead. An exiting process has left its cgroups (its /proc/PID/cgroup names the root then),
// and what is read of it is no longer what it was.
func (st Stat) Exiting() bool {
	return st.Flags&pfExiting != 0 || st.State == 'Z' || st.State == 'X'
}

// Cgroup describes the memory cgroup of a process.
type Cgroup struct {
	Version int    // 1 or 2
	Path    string // cgroup path from /proc/PID/cgroup, e.g. /kubepods/pod1/abc
	Dir     string // directory in the mounted hierarchy (under Root; under /proc/PID/root for a process in another mount namespace)
	// Mount is the hierarchy's mount point, as Dir spells it: where the walk for a parent's
	// limit stops (Reread reads the cgroup again from Dir and Mount).
	Mount string

	// LimitBytes is the effective memory limit: the smallest of this
	// cgroup's and its visible ancestors' limits (and, on v1, the kernel's
	// hierarchical_memory_limit, which also covers ancestors that are not
	// visible); 0 = no limit. LimitDir is the directory where that limit is
	// set; when the limit sits above the visible hierarchy (v1 only) it is
	// the topmost visible directory, the mount point.
	LimitBytes uint64
	LimitDir   string

	HighBytes       uint64 // v2 memory.high (0 = none; always 0 on v1)
	UsageBytes      uint64 // v2 memory.current, v1 memory.usage_in_bytes
	PeakBytes       uint64 // v2 memory.peak (Linux 5.19+), v1 memory.max_usage_in_bytes
	WorkingSetBytes uint64 // usage - inactive_file, floored at 0 (what kubelet uses)

	// From memory.stat. v2: anon, file, inactive_file, kernel (before Linux
	// 5.18, which lacks it: kernel_stack+pagetables+percpu+slab), sock.
	// v1: the hierarchical total_rss, total_cache, total_inactive_file (the
	// local rss, cache, inactive_file when total_* are absent); KernelBytes
	// is memory.kmem.usage_in_bytes and SockBytes memory.kmem.tcp.usage_in_bytes
	// (v1 charges TCP buffers separately, not to usage), 0 when absent.
	AnonBytes, FileBytes, InactiveFileBytes, KernelBytes, SockBytes uint64

	// OOMKills and MaxEvents: v2 memory.events oom_kill and max; v1
	// memory.oom_control oom_kill (Linux 4.13+, else 0) and memory.failcnt.
	OOMKills, MaxEvents uint64
}

// Listener is a listening TCP socket.
type Listener struct {
	Addr  netip.Addr // as the kernel reports it: IPv4-mapped IPv6 stays mapped
	Port  int
	Inode uint64
}

// Sched is what the scheduler says of a process's threads (/proc/PID/task/*/schedstat):
// how long they ran on a CPU and how long they waited, runnable, for one. On a busy machine
// the wait grows, and so does every CPU time the Go runtime estimates from wall-clock time
// (gctrace's and runtime/metrics' GC CPU): Run/(Run+Wait) is the share of that time the
// threads really had a CPU.
type Sched struct {
	Run, Wait time.Duration
	// Tasks is how many threads were read; Truncated is true when there were more than
	// MaxSchedTasks (the sums then cover the first ones).
	Tasks     int
	Truncated bool
}

// MaxSchedTasks bounds the threads Sched reads, so that one sample of a process with
// thousands of threads stays cheap.
const MaxSchedTasks = 1024
