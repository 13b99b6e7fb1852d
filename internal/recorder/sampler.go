package recorder

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/agent/sample"
	"github.com/memdoctor/memdoctor/session"
)

// errExiting is a sample of a process found in its exit: it is gone.
var errExiting = fmt.Errorf("the process is exiting: %w", fs.ErrNotExist)

// sampleProc reads the target's memory from /proc and its cgroup. A missing smaps_rollup or
// cgroup does not fail the sample (older kernels, other namespaces): those parts stay empty,
// and cgErr says why the cgroup is missing. cg is the cgroup as read, to read it again later.
//
// A process that began its exit while it was read fails with errExiting, its reading dropped:
// its memory is being unmapped, and on cgroup v1 the kernel shows a task in its exit
// (PF_EXITING, set first thing in do_exit) in the root cgroup (kernel/cgroup/cgroup.c,
// proc_cgroup_show), while its mount table, read next to find the cgroup's directory, stays
// readable until its namespaces go, later in the exit (a zombie's read fails). A reading in that
// window, the root's, had become the cgroup read again after the end, where the kernel's OOM
// kill is counted, and its usage (the machine's) had been set against the target's limit
// (TestOOMKillE2E/watch in CI: "usage at 2506% of its limit", the kill not noted).
func sampleProc(fsys procfs.FS, pid int, now time.Time) (smp session.Sample, cg procfs.Cgroup, cgErr, err error) {
	smp = session.Sample{Time: now.UTC(), Proc: &session.Proc{}}
	if err := sample.Proc(fsys, pid, smp.Proc); err != nil {
		return session.Sample{}, cg, nil, err
	}
	if cg, cgErr = fsys.Cgroup(pid); cgErr == nil {
		rec := sample.FromCgroup(cg)
		smp.Cgroup = &rec
	}
	smp.Sched = readSched(fsys, pid)
	if st, err := fsys.Stat(pid); errors.Is(err, fs.ErrNotExist) || err == nil && st.Exiting() {
		return session.Sample{}, procfs.Cgroup{}, nil, errExiting
	}
	return smp, cg, cgErr, nil
}

// addTree adds the resident memory of the whole tree under root to the sample.
func addTree(fs procfs.FS, root int, smp *session.Sample) {
	pids, err := fs.Descendants(root)
	if err != nil || smp.Proc == nil {
		return
	}
	var total uint64
	n := 0
	for _, pid := range append([]int{root}, pids...) {
		if st, err := fs.Status(pid); err == nil {
			total += st.VmRSS
			n++
		}
	}
	smp.Proc.TreeRSSBytes, smp.Proc.TreeProcs = total, n
}

// readSched reads how long the target's threads ran and waited for a CPU; nil when the kernel
// keeps no such statistics.
func readSched(fs procfs.FS, pid int) *session.Sched {
	var s session.Sched
	if sample.Sched(fs, pid, &s) != nil {
		return nil
	}
	return &s
}
