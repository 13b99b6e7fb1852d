package session

import "github.com/memdoctor/memdoctor/collect/procfs"

// ReadProc fills p from /proc/PID (status, smaps_rollup, stat). A missing smaps_rollup
// (Linux before 4.14) leaves LazyFree 0 and a missing stat leaves CPUSeconds 0; a missing
// status is an error (the process is gone, or /proc is hidden).
func ReadProc(fs procfs.FS, pid int, p *Proc) error {
	st, err := fs.Status(pid)
	if err != nil {
		return err
	}
	*p = Proc{
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

// ReadCgroup fills c from the memory cgroup of PID.
func ReadCgroup(fs procfs.FS, pid int, c *Cgroup) error {
	cg, err := fs.Cgroup(pid)
	if err != nil {
		return err
	}
	*c = Cgroup{
		Version:         cg.Version,
		LimitBytes:      cg.LimitBytes,
		UsageBytes:      cg.UsageBytes,
		WorkingSetBytes: cg.WorkingSetBytes,
		AnonBytes:       cg.AnonBytes,
		FileBytes:       cg.FileBytes,
		OOMKills:        cg.OOMKills,
	}
	return nil
}
