package recorder

import (
	"os/exec"
	"syscall"
)

// StartGroup starts cmd in a process group of its own, as memdoctor starts the programs it
// runs: on Linux the kernel kills it should memdoctor die without stopping it (memdoctor test's
// test processes and go commands start so).
func StartGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = groupAttr()
	return startCmd(cmd)
}

// KillGroup kills the process group StartGroup started pid in: the process and every process
// it started that stayed in its group.
func KillGroup(pid int) { signalGroup(pid, syscall.SIGKILL) }
