package culprit

import "strings"

// Running reports whether a goroutine's stack (leaf first) shows it running or runnable
// rather than blocked: every wait of a goroutine goes through runtime.gopark, and a goroutine
// in a system call or in C sits in the syscall package's or the runtime's entry to it; a stack
// whose leaf is the runtime's but that holds none of those is running on a thread or was
// preempted while it ran (runtime.asyncPreempt, a non-blocking channel operation, the
// runtime's goroutine profile being written). A goroutine that never blocks spins: when such
// goroutines pile up they take the CPU as well as their stacks. A stack whose leaf is not the
// runtime's says nothing of it (a debug=1 dump leaves the runtime's frames out, and one of the
// program's frames may be running or waiting): not running.
func Running(stack []string) bool {
	if len(stack) == 0 || !strings.HasPrefix(stack[0], "runtime.") {
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
		strings.HasPrefix(frame, "runtime/internal/syscall") || strings.HasPrefix(frame, "golang.org/x/sys/unix.") ||
		strings.Contains(frame, ".runtime_") // the runtime's waits linked into other packages (poll, sync)
}

// Runs reports whether the group's goroutines were running or runnable, never parked: by
// their wait state when it is known, else by their stack (Running).
func (g GoroutineGroup) Runs() bool {
	return g.State == "running" || g.State == "runnable" || g.State == "" && Running(g.Stack)
}
