//go:build !linux

package process

import "errors"

// LiveMemory reads a live process's memory: on Linux only.
type LiveMemory struct{}

// OpenLiveMemory fails off Linux: memdoctor reads a live process's memory on Linux only.
func OpenLiveMemory(pid int) (*LiveMemory, error) {
	return nil, errors.New("reading a process's memory needs Linux")
}

func (*LiveMemory) Close() error       { return nil }
func (*LiveMemory) NotResident() int64 { return 0 }
func (*LiveMemory) PageMapRead() bool  { return false }
func (*LiveMemory) ReadMemory([]byte, uint64) (int, error) {
	return 0, errors.New("reading a process's memory needs Linux")
}
