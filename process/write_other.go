//go:build !linux

package process

import "errors"

// SetMemProfileRate needs a live process on Linux.
func (t *Target) SetMemProfileRate(rate int64) (old int64, err error) {
	return 0, errors.New("setting the heap profiling rate needs a live process on Linux")
}
