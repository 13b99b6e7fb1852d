package culprit

import "strings"

// Running reports whether a goroutine's stack (leaf first) shows it running or runnable
// rather than blocked: every wait of a goroutine goes through runtime.gopark, and a goroutine
// in a system call or in C sits in the syscall package's or the runtime's entry to it; a stack
// with none of those is running on a thread or was preempted while it ran (runtime.asyncPreempt,
// a non-blocking channel operation, a zero time.Sleep). A goroutine that never blocks spins:
// when such goroutines pile up they take the CPU as well as their stacks.
func Running(stack []string) bool {
	if len(stack) == 0 {
		return false
	}
	for _, fr := range stack {
		if Blocks(fr) {
			return false
		}
	}
	return true
}

// Blocks reports whether a frame is where a goroutine blocks: the scheduler's park, a system
// call, a call into C.
func Blocks(frame string) bool {
	switch frame {
	case "runtime.gopark", "runtime.goparkunlock", "runtime.notetsleepg", "runtime.cgocall", "runtime.asmcgocall", elidedFrame:
		return true
	}
	return strings.HasPrefix(frame, "syscall.") || strings.HasPrefix(frame, "internal/runtime/syscall") ||
		strings.HasPrefix(frame, "runtime/internal/syscall") || strings.HasPrefix(frame, "golang.org/x/sys/unix.")
}
