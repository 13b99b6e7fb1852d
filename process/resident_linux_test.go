package process

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages reports, page by page, whether this process's memory b is resident
// (mincore: the kernel's own answer, independent of the page map).
func residentPages(t *testing.T, b []byte) []bool {
	t.Helper()
	vec := make([]byte, (len(b)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

// sparseMemory maps 16 MiB of anonymous memory (never in huge pages) of which the first 4 MiB
// are written, the next 4 MiB written then given back (MADV_DONTNEED, as the Go runtime's
// scavenger does), and the rest never touched.
func sparseMemory(t *testing.T) (b []byte, written int, released Region, untouched Region) {
	t.Helper()
	const size, part = 16 << 20, 4 << 20
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	for i := range 2 * part {
		b[i] = byte(i%251 + 1)
	}
	if err := unix.Madvise(b[part:2*part], unix.MADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	lo := uint64(uintptr(unsafe.Pointer(&b[0])))
	return b, part, Region{lo + part, lo + 2*part}, Region{lo + 2*part, lo + size}
}

// TestReadLeavesPagesAlone reads memory of this very process that is resident, given back and
// never touched, through the page map's scan and its entries: what is resident is read, the
// rest reads as zeros and stays not resident (mincore), and is counted.
func TestReadLeavesPagesAlone(t *testing.T) {
	for _, mode := range []int32{scanUntried, scanNone} {
		t.Run(fmt.Sprint("scan mode ", mode), func(t *testing.T) {
			b, written, released, untouched := sparseMemory(t)
			m, err := OpenLiveMemory(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.res == nil {
				t.Fatal("the page map cannot be read")
			}
			m.res.scan.Store(mode)
			lo := uint64(uintptr(unsafe.Pointer(&b[0])))
			got := make([]byte, len(b))
			for off := 0; off < len(b); off += 1 << 20 {
				if _, err := m.ReadMemory(got[off:off+1<<20], lo+uint64(off)); err != nil {
					t.Fatal(err)
				}
			}
			want := make([]byte, len(b))
			for i := range written {
				want[i] = byte(i%251 + 1)
			}
			if !bytes.Equal(got, want) {
				t.Error("the memory read is not the process's: written bytes, then zeros")
			}
			if n, want := m.NotResident(), int64(released.Hi-released.Lo+untouched.Hi-untouched.Lo); n != want {
				t.Errorf("%d bytes read as not resident, want %d", n, want)
			}
			res := residentPages(t, b)
			page := os.Getpagesize()
			for i, r := range res {
				if want := i*page < written; r != want {
					t.Fatalf("page %d (of %d): resident %v after the read, want %v", i, len(res), r, want)
				}
			}
		})
	}
}

// TestCopyLeavesPagesAlone copies the same memory as a stopped process's copy is made: the copy
// holds it whole (zeros where nothing is resident), says how much was not resident, and
// leaves it so.
func TestCopyLeavesPagesAlone(t *testing.T) {
	b, written, released, untouched := sparseMemory(t)
	mem, err := OpenLiveMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	lo := uint64(uintptr(unsafe.Pointer(&b[0])))
	for _, novm := range []bool{false, true} {
		s := &liveSource{pid: os.Getpid(), mem: mem}
		s.novm.Store(novm)
		c := newTestCopy(t, s)
		// Two ranges around a gap, each across resident and not resident pages.
		rs := []Region{{lo + 1<<20, lo + 6<<20}, {lo + 7<<20, lo + 12<<20}}
		if err := c.Add(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
		if got, want := c.NotResident(), int64(2<<20+5<<20); got != want {
			t.Errorf("novm %v: %d bytes not resident, want %d", novm, got, want)
		}
		got := make([]byte, 5<<20)
		for _, r := range rs {
			if _, err := c.ReadMemory(got, r.Lo); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				a, want := r.Lo+uint64(i), byte(0)
				if a < lo+uint64(written) {
					want = b[a-lo]
				}
				if got[i] != want {
					t.Fatalf("novm %v: the copy holds %d at %#x, want %d", novm, got[i], a, want)
				}
			}
		}
	}
	page := os.Getpagesize()
	for i, r := range residentPages(t, b) {
		if a := lo + uint64(i*page); r && (released.Lo <= a && a < released.Hi || untouched.Lo <= a) {
			t.Fatalf("page %d at %#x is resident after the copy", i, a)
		}
	}
}

// TestParseMapping: which mappings are private anonymous memory.
func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line           string
		readable, anon bool
	}{
		{"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ", true, true},
		{"c000000000-c004000000 rw-p 00000000 00:00 0", true, true},
		{"01a2b000-01a4c000 rw-p 00000000 00:00 0                                  [heap]", true, true},
		{"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]", true, true},
		{"7f0000000000-7f0000001000 rw-p 00000000 00:00 0    [anon:scratch]", true, true},
		{"7f0000000000-7f0000001000 ---p 00000000 00:00 0 ", false, true},
		{"00400000-00800000 r-xp 00000000 fd:01 1234       /usr/bin/server", true, false},
		{"00a00000-00a10000 rw-p 00600000 fd:01 1234       /usr/bin/server", true, false},
		{"7f0000000000-7f0000100000 rw-s 00000000 00:01 77   /dev/zero (deleted)", true, false},
		{"7ffd1e3f5000-7ffd1e3f7000 r-xp 00000000 00:00 0                          [vdso]", true, false},
		{"7ffd1e3f3000-7ffd1e3f5000 r--p 00000000 00:00 0                          [vvar]", true, false},
		{"7f0000000000-7f0000001000 rw-s 00000000 00:00 0   [anon_shmem:x]", true, false},
	} {
		m, ok := parseMapping(c.line)
		if !ok || m.readable != c.readable || m.anon != c.anon {
			t.Errorf("%q: ok %v readable %v anon %v, want readable %v anon %v", c.line, ok, m.readable, m.anon, c.readable, c.anon)
		}
	}
}
