// Package sample reads one sample of a process's memory as the kernel sees it (/proc/PID and
// its memory cgroup) into the session's records. The agent (for itself) and the recorder
// (for a target) share it, so that both write the same figures the same way.
package sample

import (
	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/agent/record"
)

// Proc fills p from /proc/PID (status, smaps_rollup, stat). A missing smaps_rollup
// (Linux before 4.14) leaves LazyFree 0 and a missing stat leaves CPUSeconds 0; a missing
// status is an error (the process is gone, or /proc is hidden).
func Proc(fs procfs.FS, pid int, p *record.Proc) error {
	st, err := fs.Status(pid)
	if err != nil {
		return err
	}
	*p = record.Proc{
		PID:           pid,
		RSSBytes:      st.VmRSS,
		RSSAnonBytes:  st.RssAnon,
		RSSFileBytes:  st.RssFile,
		RSSShmemBytes: st.RssShmem,
		HWMBytes:      st.VmHWM,
		Threads:       st.Threads,
	}
	if ro, err := fs.SmapsRollup(pid); err == nil {
		p.LazyFreeBytes = ro.LazyFree
	}
	if s, err := fs.Stat(pid); err == nil {
		p.CPUSeconds = (s.UTime + s.STime).Seconds()
	}
	return nil
}

// Cgroup fills c from the memory cgroup of PID.
func Cgroup(fs procfs.FS, pid int, c *record.Cgroup) error {
	cg, err := fs.Cgroup(pid)
	if err != nil {
		return err
	}
	*c = FromCgroup(cg)
	return nil
}

// FromCgroup is the record of a cgroup reading.
func FromCgroup(cg procfs.Cgroup) record.Cgroup {
	return record.Cgroup{
		Version:         cg.Version,
		LimitBytes:      cg.LimitBytes,
		UsageBytes:      cg.UsageBytes,
		WorkingSetBytes: cg.WorkingSetBytes,
		AnonBytes:       cg.AnonBytes,
		FileBytes:       cg.FileBytes,
		OOMKills:        cg.OOMKills,
	}
}

// Sched fills s from the scheduler's statistics of PID's threads: how long they ran, and
// how long they waited for a CPU.
func Sched(fs procfs.FS, pid int, s *record.Sched) error {
	st, err := fs.Sched(pid)
	if err != nil {
		return err
	}
	*s = record.Sched{RunSeconds: st.Run.Seconds(), WaitSeconds: st.Wait.Seconds(), Tasks: st.Tasks}
	return nil
}
