//go:build unix

package agent

import (
	"syscall"
	"unsafe"
)

// allocSlots allocates n slots in an anonymous private mapping, outside the Go heap, and
// returns the function that unmaps them. If the mapping fails, the slots come from the Go
// heap (release is then nil).
func allocSlots(n int) (slots []stored, release func()) {
	size := n * int(unsafe.Sizeof(stored{}))
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]stored, n), nil
	}
	return unsafe.Slice((*stored)(unsafe.Pointer(&mem[0])), n), func() { _ = syscall.Munmap(mem) }
}
