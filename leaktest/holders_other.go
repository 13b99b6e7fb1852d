//go:build !linux

package leaktest

import "errors"

// runHolders is Linux's: memdoctor holders reads a live process only there.
func runHolders(fns []string, test string) (*holdersResult, error) {
	return nil, errors.New("memdoctor holders reads a live process on Linux only: run the test there with the memdoctor command on PATH (" +
		"go install github.com/memdoctor/memdoctor/cmd/memdoctor@latest), or read a core of a process that leaks the same way (gcore PID; memdoctor holders CORE EXECUTABLE)")
}
