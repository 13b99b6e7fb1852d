//go:build unix && !linux

package recorder

import (
	"os/exec"
	"syscall"
)

// groupAttr starts the program in a process group of its own, which memdoctor signals as a
// whole. (Run refuses to start outside Linux; this keeps the package building there.)
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// startCmd starts cmd: no parent-death signal ties it to a thread here.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
