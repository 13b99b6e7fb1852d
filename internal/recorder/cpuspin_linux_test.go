package recorder

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// spendCPU keeps one thread on the CPU until it has run for d (its own CPU time, however
// long a busy machine makes that take): what a read that costs the target d does.
func spendCPU(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	for threadCPU()-start < d {
	}
}

func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 1 << 62 // cannot tell: stop spinning
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
