package recorder

import "syscall"

// groupAttr starts the program in a process group of its own, which memdoctor signals as a
// whole, and has the kernel kill it (SIGKILL: a program may ignore SIGTERM) should memdoctor
// die first without stopping it, killed by SIGKILL or the OOM killer. The kernel does this for
// the program memdoctor started, not for the processes that program starts in turn.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
