// Package procfs reads Linux /proc and cgroup (v1 and v2) files: a process's
// memory (status, smaps_rollup), CPU times and start time (stat), command line,
// environment, executable, descendants, its memory cgroup with the effective
// limit, and its listening TCP sockets (and the reverse: which process listens
// on a port).
//
// Every read goes through an FS, whose Root is prepended to /proc and
// /sys/fs/cgroup, so the same code runs against the real system (Root "" or
// "/") and against fake trees in tests. The readers are meant to be called
// every second by collectors and by the embedded agent: they read small files
// into pooled buffers with raw system calls and allocate little (see the
// benchmarks). Only the standard library is imported.
//
// On systems other than Linux every method returns an error wrapping
// errors.ErrUnsupported. The text parsers have no build constraint and are
// tested (and fuzzed) everywhere.
package procfs

import (
	"errors"
	"strings"
	"time"
)

// FS reads /proc and /sys/fs/cgroup below Root ("" or "/" means the real root).
// An FS is a plain value: it holds no open files and is safe for concurrent use.
type FS struct{ Root string }

// UserHZ is the clock-tick rate of the times in /proc/PID/stat. The kernel
// reports them in USER_HZ, which is 100 on every mainstream Linux architecture
// (x86, arm, arm64, ppc, s390, riscv) regardless of the kernel's CONFIG_HZ;
// this package assumes it rather than calling sysconf(_SC_CLK_TCK) through cgo.
const UserHZ = 100

// tick is the duration of one USER_HZ clock tick.
const tick = time.Second / UserHZ

// Errors that callers may test for with errors.Is.
var (
	// ErrNoListener: nothing listens on the requested TCP port (in the
	// network namespace whose /proc/net was read).
	ErrNoListener = errors.New("nothing listens")
	// ErrOwnerNotVisible: a listening socket exists but no visible process
	// holds it (permission denied on /proc/PID/fd, or the owner lives in
	// another PID namespace).
	ErrOwnerNotVisible = errors.New("a socket listens but no visible process holds it")
	// ErrNoMemoryCgroup: no cgroup memory controller was found for the process.
	ErrNoMemoryCgroup = errors.New("no cgroup memory controller found")
)

// root returns fsys.Root without trailing slashes, so "/" and "" both mean the
// real root and joined paths never contain "//".
func (fsys FS) root() string {
	return strings.TrimRight(fsys.Root, "/")
}
