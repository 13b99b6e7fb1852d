//go:build unix

package walk

import (
	"fmt"
	"syscall"
	"unsafe"
)

// words is an array of n uint32 outside the Go heap, in pages of its own: the walk's arrays
// grow with the target's object count (tens of millions), and kept in the Go heap they would
// let the GC's pacing double memdoctor's memory in garbage. free returns the pages.
func words(n int) ([]uint32, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, fmt.Errorf("%d MiB for the walk's arrays: %w", n*4>>20, err)
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n), func() { syscall.Munmap(b) }, nil
}
