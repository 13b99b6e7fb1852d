//go:build !linux

package recorder

import "os/exec"

// waitExit waits for the program memdoctor started (run needs Linux: see wait_linux.go).
func waitExit(cmd *exec.Cmd) error { return cmd.Wait() }
