package process

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkAbsent is what asking the page map costs a copy, per GiB of a process's heap: a
// mapping of 1 GiB (small pages) whose every other 64 KiB is written, the rest never touched,
// asked whole, with PAGEMAP_SCAN and with the page map's entries. bench/holders times the
// whole stop.
func BenchmarkAbsent(b *testing.B) {
	const size, stride = 1 << 30, 64 << 10
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(mem)
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
	for off := 0; off < size; off += 2 * stride {
		for i := off; i < off+stride; i += os.Getpagesize() {
			mem[i] = 1
		}
	}
	lo := uint64(uintptr(unsafe.Pointer(&mem[0])))
	for _, mode := range []int32{scanUntried, scanNone} {
		b.Run(fmt.Sprint("scan mode ", mode), func(b *testing.B) {
			m, err := OpenLiveMemory(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			if m.res == nil {
				b.Skip("the page map cannot be read")
			}
			var out []Region
			b.SetBytes(size)
			for b.Loop() {
				m.res.scan.Store(mode)
				out, err = m.res.absent([]Region{{lo, lo + size}}, out[:0])
				if err != nil {
					b.Fatal(err)
				}
			}
			if n := len(out); n != size/stride/2 {
				b.Fatalf("%d runs absent, want %d", n, size/stride/2)
			}
		})
	}
}
