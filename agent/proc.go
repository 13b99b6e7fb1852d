package agent

import (
	"errors"
	"time"

	"github.com/memdoctor/memdoctor/collect/procfs"
	"github.com/memdoctor/memdoctor/session"
)

// readProc fills p from /proc/self (status, smaps_rollup, stat); false when /proc cannot be
// read (not Linux, or hidden). A missing smaps_rollup (Linux before 4.14) leaves LazyFree 0.
func (a *Agent) readProc(p *session.Proc) bool {
	fs, pid := a.cfg.fs, a.cfg.pid
	st, err := fs.Status(pid)
	if err != nil {
		return false
	}
	*p = session.Proc{
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
	return true
}

// readCgroup fills c from the process's memory cgroup; false when there is none. A process
// that has no memory cgroup stops looking after the first try.
func (a *Agent) readCgroup(c *session.Cgroup) bool {
	if a.cgroupOff {
		return false
	}
	cg, err := a.cfg.fs.Cgroup(a.cfg.pid)
	if err != nil {
		if errors.Is(err, procfs.ErrNoMemoryCgroup) || errors.Is(err, errors.ErrUnsupported) {
			a.cgroupOff = true
		}
		return false
	}
	*c = session.Cgroup{
		Version:         cg.Version,
		LimitBytes:      cg.LimitBytes,
		UsageBytes:      cg.UsageBytes,
		WorkingSetBytes: cg.WorkingSetBytes,
		AnonBytes:       cg.AnonBytes,
		FileBytes:       cg.FileBytes,
		OOMKills:        cg.OOMKills,
	}
	return true
}

// sinceStart is the agent's uptime.
func (a *Agent) sinceStart() time.Duration { return time.Since(a.start) }
