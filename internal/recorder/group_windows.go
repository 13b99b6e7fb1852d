package recorder

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// groupAttr has nothing to set on Windows. (Run refuses to start outside Linux; this keeps the
// package building there.)
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the process pgid on SIGKILL; Windows has no process groups to signal.
func signalGroup(pgid int, sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return errors.ErrUnsupported
	}
	p, err := os.FindProcess(pgid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// startCmd starts cmd: no parent-death signal ties it to a thread here.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
