package agent

import (
	"errors"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/agent/record"
	"github.com/memdoctor/memdoctor/agent/sample"
)

// readProc fills p from /proc/self (status, smaps_rollup, stat); false when /proc cannot be
// read (not Linux, or hidden). A missing smaps_rollup (Linux before 4.14) leaves LazyFree 0.
func (a *Agent) readProc(p *record.Proc) bool {
	return sample.Proc(a.cfg.fs, a.cfg.pid, p) == nil
}

// readCgroup fills c from the process's memory cgroup; false when there is none. A process
// that has no memory cgroup stops looking after the first try.
func (a *Agent) readCgroup(c *record.Cgroup) bool {
	if a.cgroupOff {
		return false
	}
	if err := sample.Cgroup(a.cfg.fs, a.cfg.pid, c); err != nil {
		if errors.Is(err, procfs.ErrNoMemoryCgroup) || errors.Is(err, errors.ErrUnsupported) {
			a.cgroupOff = true
		}
		return false
	}
	return true
}
