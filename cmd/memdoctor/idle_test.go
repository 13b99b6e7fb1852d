package main

import (
	"os/exec"
	"sync"
)

// canIdle reports whether chrt can run a command at the scheduler's idle priority (Linux's
// SCHED_IDLE, util-linux's chrt); elsewhere commands run as they are.
var canIdle = sync.OnceValue(func() bool {
	return exec.Command("chrt", "--idle", "0", "true").Run() == nil
})

// idleCommand is exec.Command(name, args...) run at the idle priority where it can be: a
// compile beside the end-to-end tests then takes only the CPU the programs they watch leave
// (a process that wakes up at the normal priority runs at once), and does not make their
// readings late.
func idleCommand(name string, args ...string) *exec.Cmd {
	if canIdle() {
		return exec.Command("chrt", append([]string{"--idle", "0", name}, args...)...)
	}
	return exec.Command(name, args...)
}
