package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// madvGuardInstall is MADV_GUARD_INSTALL (Linux 6.13): pages that fault when touched, that
// no other process can read, in a mapping that /proc/PID/maps still shows readable.
const madvGuardInstall = 102

// guardStacks starts two goroutines, each of which grows its stack past what it then uses and
// makes a page of the unused part unreadable: one with mprotect (its map says so), the other
// with a guard region where the kernel makes them (its map does not say so). It says, for
// each, the page's address or why there is none. The GC is turned off first (after one cycle,
// which publishes the heap profile's samples), so that no stack is shrunk, moved and reused.
func guardStacks() string {
	runtime.GC()
	debug.SetGCPercent(-1)
	out := make(chan string)
	go guarded("mprotect", func(b []byte) error { return syscall.Mprotect(b, syscall.PROT_NONE) }, out)
	go guarded("madvise", func(b []byte) error {
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), madvGuardInstall)
		if e != 0 {
			return e
		}
		return nil
	}, out)
	return <-out + " " + <-out
}

// guarded makes a page of its own stack unreadable with how, says which, and parks for ever.
func guarded(name string, how func([]byte) error, out chan<- string) {
	deep := grow(64)
	var top byte
	sp := uintptr(unsafe.Pointer(&top))
	page := uintptr(os.Getpagesize())
	addr := (deep + page) &^ (page - 1) // above the deepest frame, far below the ones in use
	switch {
	case addr+2*page > sp:
		out <- fmt.Sprintf("%s=no-room", name)
	default:
		if err := how(unsafe.Slice((*byte)(unsafe.Pointer(addr)), page)); err != nil {
			out <- fmt.Sprintf("%s=unsupported(%v)", name, err)
		} else {
			out <- fmt.Sprintf("%s=%#x", name, addr)
		}
	}
	select {}
}

// grow recurses n frames of over a KiB each, and returns the address of the deepest one's.
//
//go:noinline
func grow(n int) uintptr {
	var pad [1024]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return uintptr(unsafe.Pointer(&pad[0]))
	}
	r := grow(n - 1)
	runtime.KeepAlive(pad)
	return r
}
