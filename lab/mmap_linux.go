package lab

import "syscall"

// mapAnon maps size bytes of private anonymous memory, outside the Go heap.
func mapAnon(size int) ([]byte, error) {
	return syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapAnon(b []byte) error { return syscall.Munmap(b) }
