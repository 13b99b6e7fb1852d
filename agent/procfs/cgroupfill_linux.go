//go:build linux

package procfs

import (
	"fmt"
	"io/fs"
)

// fillV2 reads a cgroup v2 directory; top is the mount point (where the walk
// for a parent's limit stops).
func fillV2(cg *Cgroup, top string) error {
	var err error
	var found bool
	if cg.UsageBytes, found, err = cgValue(cg.Dir, "memory.current"); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s has no memory.current (the root cgroup, or the memory controller is not enabled for it): %w", cg.Dir, fs.ErrNotExist)
	}
	if cg.PeakBytes, _, err = cgValue(cg.Dir, "memory.peak"); err != nil {
		return err
	}
	if _, err = withCgFile(cg.Dir, "memory.high", func(b []byte) (err error) {
		cg.HighBytes, err = parseLimit(b)
		return err
	}); err != nil {
		return err
	}
	var ms memStat
	if _, err = withCgFile(cg.Dir, "memory.stat", func(b []byte) (err error) {
		ms, err = parseMemoryStat(b, 2)
		return err
	}); err != nil {
		return err
	}
	cg.setStat(ms)
	cg.KernelBytes, cg.SockBytes = ms.kernel, ms.sock
	if _, err = withCgFile(cg.Dir, "memory.events", func(b []byte) error {
		cg.OOMKills, _ = lookupKV(b, "oom_kill")
		cg.MaxEvents, _ = lookupKV(b, "max")
		return nil
	}); err != nil {
		return err
	}
	cg.LimitBytes, cg.LimitDir, _, err = walkLimits(cg.Dir, top, "memory.max", 0)
	return err
}

// fillV1 reads a cgroup v1 memory directory; top is the mount point.
func fillV1(cg *Cgroup, top string) error {
	var err error
	var found bool
	if cg.UsageBytes, found, err = cgValue(cg.Dir, "memory.usage_in_bytes"); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s has no memory.usage_in_bytes: %w", cg.Dir, fs.ErrNotExist)
	}
	if cg.PeakBytes, _, err = cgValue(cg.Dir, "memory.max_usage_in_bytes"); err != nil {
		return err
	}
	if cg.MaxEvents, _, err = cgValue(cg.Dir, "memory.failcnt"); err != nil {
		return err
	}
	if cg.KernelBytes, _, err = cgValue(cg.Dir, "memory.kmem.usage_in_bytes"); err != nil {
		return err
	}
	var ms memStat
	if _, err = withCgFile(cg.Dir, "memory.stat", func(b []byte) (err error) {
		ms, err = parseMemoryStat(b, 1)
		return err
	}); err != nil {
		return err
	}
	cg.setStat(ms)
	if cg.SockBytes, _, err = cgValue(cg.Dir, "memory.kmem.tcp.usage_in_bytes"); err != nil {
		return err
	}
	if _, err = withCgFile(cg.Dir, "memory.oom_control", func(b []byte) error {
		cg.OOMKills, _ = lookupKV(b, "oom_kill")
		return nil
	}); err != nil {
		return err
	}
	limit, limitDir, hierDir, err := walkLimits(cg.Dir, top, "memory.limit_in_bytes", ms.hierLimit)
	if err != nil {
		return err
	}
	cg.LimitBytes, cg.LimitDir = limit, limitDir
	if ms.hasHierLimit {
		// The kernel's own answer covers ancestors above the mount (a
		// container's view) and use_hierarchy=0, where a parent's limit
		// does not apply.
		cg.LimitBytes, cg.LimitDir = ms.hierLimit, hierDir
		if hierDir == "" && ms.hierLimit != 0 {
			cg.LimitDir = top
		}
	}
	return nil
}

// setStat copies the memory.stat figures common to v1 and v2 and derives the
// working set.
func (cg *Cgroup) setStat(ms memStat) {
	cg.AnonBytes, cg.FileBytes, cg.InactiveFileBytes = ms.anon, ms.file, ms.inactiveFile
	cg.WorkingSetBytes = workingSet(cg.UsageBytes, ms.inactiveFile)
}
