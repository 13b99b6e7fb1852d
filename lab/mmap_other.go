//go:build !linux

package lab

import (
	"errors"
	"runtime"
)

// mapAnon is only implemented on Linux, where memdoctor reads /proc.
func mapAnon(size int) ([]byte, error) {
	return nil, errors.New("anonymous mmap is not supported by the lab on " + runtime.GOOS + "; run non-go-mmap on Linux")
}

func unmapAnon(b []byte) error { return nil }
