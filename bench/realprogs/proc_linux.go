package main

import (
	"os/exec"
	"syscall"
)

// startGroup starts cmd as the leader of a new process group.
func startGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// signalGroup sends SIGTERM, or SIGKILL when kill is set, to the process group led by pgid.
func signalGroup(pgid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pgid, sig)
}
