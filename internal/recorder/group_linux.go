package recorder

import "syscall"

// groupAttr starts the program in a process group of its own, which memdoctor signals as a
// whole, and has the kernel send it SIGTERM should memdoctor die first.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
