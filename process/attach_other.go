//go:build !linux

package process

import (
	"errors"
	"fmt"
)

// Attach needs Linux: elsewhere read a core file taken on Linux with its executable.
func Attach(pid int) (*Target, error) {
	return nil, fmt.Errorf("process %d: %w", pid, errors.New("reading a live process needs Linux (ptrace and /proc); "+
		"take a core on the Linux host (gcore PID) and give it with its executable"))
}
