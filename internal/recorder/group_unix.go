//go:build unix

package recorder

import "syscall"

// signalGroup sends sig to every process of the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
