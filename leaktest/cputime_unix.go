//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package leaktest

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far (user and system, every thread), or
// false when it cannot be read.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
