//go:build linux

package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

func checkPID(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("procfs: bad pid %d (must be > 0)", pid)
	}
	return nil
}

// Status reads /proc/PID/status.
func (fsys FS) Status(pid int) (Status, error) {
	if err := checkPID(pid); err != nil {
		return Status{}, err
	}
	var pb [pathMax]byte
	var st Status
	err := withFile(procPath(pb[:0], fsys.root(), pid, "status"), func(b []byte) (err error) {
		st, err = parseStatus(b)
		return err
	})
	if err != nil {
		return Status{}, fmt.Errorf("procfs: %w", err)
	}
	return st, nil
}

// SmapsRollup reads /proc/PID/smaps_rollup. On kernels older than 4.14,
// which lack the file, the error wraps fs.ErrNotExist and says so.
func (fsys FS) SmapsRollup(pid int) (Rollup, error) {
	if err := checkPID(pid); err != nil {
		return Rollup{}, err
	}
	var pb [pathMax]byte
	var r Rollup
	path := procPath(pb[:0], fsys.root(), pid, "smaps_rollup")
	err := withFile(path, func(b []byte) (err error) {
		r, err = parseSmapsRollup(b)
		return err
	})
	if err == nil {
		return r, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		var db [pathMax]byte
		if isDir(procPath(db[:0], fsys.root(), pid, "")) {
			return Rollup{}, fmt.Errorf("procfs: this kernel has no smaps_rollup (Linux 4.14 or later needed): %w", err)
		}
	}
	return Rollup{}, fmt.Errorf("procfs: %w", err)
}

// Stat reads /proc/PID/stat, and /proc/stat once per Root for the boot time.
func (fsys FS) Stat(pid int) (Stat, error) {
	if err := checkPID(pid); err != nil {
		return Stat{}, err
	}
	btime, err := fsys.bootTime()
	if err != nil {
		return Stat{}, err
	}
	var pb [pathMax]byte
	var st Stat
	err = withFile(procPath(pb[:0], fsys.root(), pid, "stat"), func(b []byte) (err error) {
		st, err = parseStat(b, btime)
		return err
	})
	if err != nil {
		return Stat{}, fmt.Errorf("procfs: %w", err)
	}
	return st, nil
}

// btimeCache remembers the boot time of the last Root read: it only changes
// when the wall clock is stepped, and a stable value keeps StartTime usable
// to tell a process from a later one that reused its PID.
var btimeCache struct {
	sync.Mutex
	root string
	t    time.Time
}

func (fsys FS) bootTime() (time.Time, error) {
	root := fsys.root()
	btimeCache.Lock()
	t, cached := btimeCache.t, btimeCache.root == root && !btimeCache.t.IsZero()
	btimeCache.Unlock()
	if cached {
		return t, nil
	}
	var pb [pathMax]byte
	path := joinPath(pb[:0], root, "/proc/stat")
	err := eachLine(path, func(line []byte) bool {
		var ok bool
		t, ok = parseBtimeLine(line)
		return !ok
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("procfs: boot time: %w", err)
	}
	if t.IsZero() {
		return time.Time{}, fmt.Errorf("procfs: boot time: no btime line in %s", pathString(path))
	}
	btimeCache.Lock()
	btimeCache.root, btimeCache.t = root, t
	btimeCache.Unlock()
	return t, nil
}

// Exe returns the target of /proc/PID/exe: the executable's path (in the
// process's mount namespace; " (deleted)" is appended by the kernel when
// the file was removed or replaced). Reading another user's exe link needs
// ptrace access (the same user, or root).
func (fsys FS) Exe(pid int) (string, error) {
	if err := checkPID(pid); err != nil {
		return "", err
	}
	var pb [pathMax]byte
	path := procPath(pb[:0], fsys.root(), pid, "exe")
	exe, err := os.Readlink(pathString(path))
	if err != nil {
		return "", fmt.Errorf("procfs: executable of pid %d: %w", pid, err)
	}
	return exe, nil
}

// Cmdline returns the arguments in /proc/PID/cmdline; nil for kernel threads
// and zombies.
func (fsys FS) Cmdline(pid int) ([]string, error) {
	return fsys.nulFile(pid, "cmdline")
}

// Environ returns the environment in /proc/PID/environ (as it was at exec:
// later setenv calls do not show). Only the process's owner or root may read
// it: the error then wraps fs.ErrPermission.
func (fsys FS) Environ(pid int) ([]string, error) {
	env, err := fsys.nulFile(pid, "environ")
	if err != nil && errors.Is(err, os.ErrPermission) {
		return nil, fmt.Errorf("%w (the environment is readable only by the process's user or root)", err)
	}
	return env, err
}

func (fsys FS) nulFile(pid int, name string) ([]string, error) {
	if err := checkPID(pid); err != nil {
		return nil, err
	}
	var pb [pathMax]byte
	var out []string
	err := withFile(procPath(pb[:0], fsys.root(), pid, name), func(b []byte) error {
		out = splitNUL(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	return out, nil
}

// Sched sums /proc/PID/task/*/schedstat over the process's threads (at most MaxSchedTasks).
// A thread that exits meanwhile is skipped; a kernel without schedstats (CONFIG_SCHEDSTATS
// off and no task delay accounting) has no such file, and the error wraps fs.ErrNotExist.
func (fsys FS) Sched(pid int) (Sched, error) {
	if err := checkPID(pid); err != nil {
		return Sched{}, err
	}
	root := fsys.root()
	var s Sched
	var firstErr error
	var pb [pathMax]byte
	err := eachDirInt(procPath(pb[:0], root, pid, "task"), func(tid int) bool {
		if s.Tasks == MaxSchedTasks {
			s.Truncated = true
			return false
		}
		var tb [pathMax]byte
		err := withFile(taskPath(tb[:0], root, pid, tid, "schedstat"), func(b []byte) error {
			run, wait, err := parseSchedstat(b)
			s.Run += run
			s.Wait += wait
			return err
		})
		if err == nil {
			s.Tasks++
		} else if firstErr == nil {
			firstErr = err
		}
		return true
	})
	if err != nil {
		return Sched{}, fmt.Errorf("procfs: %w", err)
	}
	if s.Tasks == 0 {
		if firstErr == nil {
			firstErr = fs.ErrNotExist
		}
		return Sched{}, fmt.Errorf("procfs: schedstat of pid %d: %w", pid, firstErr)
	}
	return s, nil
}
