//go:build !linux

package procfs

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
)

// errUnsupported is returned by every method outside Linux.
var errUnsupported = fmt.Errorf("procfs: /proc and cgroups are Linux-only (this is %s): %w", runtime.GOOS, errors.ErrUnsupported)

// Status is not supported outside Linux.
func (FS) Status(int) (Status, error) { return Status{}, errUnsupported }

// SmapsRollup is not supported outside Linux.
func (FS) SmapsRollup(int) (Rollup, error) { return Rollup{}, errUnsupported }

// Stat is not supported outside Linux.
func (FS) Stat(int) (Stat, error) { return Stat{}, errUnsupported }

// Exe is not supported outside Linux.
func (FS) Exe(int) (string, error) { return "", errUnsupported }

// Cmdline is not supported outside Linux.
func (FS) Cmdline(int) ([]string, error) { return nil, errUnsupported }

// Environ is not supported outside Linux.
func (FS) Environ(int) ([]string, error) { return nil, errUnsupported }

// Descendants is not supported outside Linux.
func (FS) Descendants(int) ([]int, error) { return nil, errUnsupported }

// Cgroup is not supported outside Linux.
func (FS) Cgroup(int) (Cgroup, error) { return Cgroup{}, errUnsupported }

// Reread is not supported outside Linux.
func (FS) Reread(Cgroup) (Cgroup, error) { return Cgroup{}, errUnsupported }

// ListeningPorts is not supported outside Linux.
func (FS) ListeningPorts(int) ([]Listener, error) { return nil, errUnsupported }

// PIDListeningOn is not supported outside Linux.
func (FS) PIDListeningOn(netip.Addr, int) (int, error) { return 0, errUnsupported }

// Sched is not supported outside Linux.
func (FS) Sched(int) (Sched, error) { return Sched{}, errUnsupported }
