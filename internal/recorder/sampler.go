package recorder

import (
	"time"

	"github.com/memdoctor/memdoctor/collect/procfs"
	"github.com/memdoctor/memdoctor/session"
)

// sampleProc reads the target's memory from /proc and its cgroup. A missing smaps_rollup or
// cgroup is not an error (older kernels, other namespaces): those parts stay empty.
func sampleProc(fs procfs.FS, pid int, now time.Time) (session.Sample, error) {
	st, err := fs.Status(pid)
	if err != nil {
		return session.Sample{}, err
	}
	p := &session.Proc{
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
	smp := session.Sample{Time: now.UTC(), Proc: p}
	if cg, err := fs.Cgroup(pid); err == nil {
		smp.Cgroup = &session.Cgroup{
			Version:         cg.Version,
			LimitBytes:      cg.LimitBytes,
			UsageBytes:      cg.UsageBytes,
			WorkingSetBytes: cg.WorkingSetBytes,
			AnonBytes:       cg.AnonBytes,
			FileBytes:       cg.FileBytes,
			OOMKills:        cg.OOMKills,
		}
	}
	return smp, nil
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
