package leaktest

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far (user and kernel, every thread), or
// false when it cannot be read.
func cpuTime() (time.Duration, bool) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, false
	}
	var creation, exit, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return 0, false
	}
	// Filetimes count 100-nanosecond intervals.
	ticks := int64(kernel.HighDateTime)<<32 | int64(kernel.LowDateTime) + int64(user.HighDateTime)<<32 | int64(user.LowDateTime)
	return time.Duration(ticks * 100), true
}
