//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// errNotLinux is why no program starts here: the harness ends programs by process group and
// reads their memory from /proc.
var errNotLinux = errors.New("bench/realprogs runs programs on Linux only (process groups, /proc); -list and -rejudge work anywhere")

// startGroup refuses to start cmd: see errNotLinux.
func startGroup(*exec.Cmd) error { return errNotLinux }

// signalGroup is never called, since startGroup never starts a process.
func signalGroup(int, bool) {}
