package process

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memFile is a file to copy into, in memory.
type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if need := int(off) + len(p); need > len(m.b) {
		m.b = append(m.b, make([]byte, need-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

// TestLiveSource copies ranges of this very process, with process_vm_readv and with
// /proc/self/mem, into consecutive bytes of a file; a range it cannot read is an error.
func TestLiveSource(t *testing.T) {
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	a, b := bytes.Repeat([]byte("abcdefgh"), 1000), bytes.Repeat([]byte("12345678"), 3000)
	ra := Region{uint64(uintptr(unsafe.Pointer(&a[0]))), uint64(uintptr(unsafe.Pointer(&a[0]))) + uint64(len(a))}
	rb := Region{uint64(uintptr(unsafe.Pointer(&b[0]))), uint64(uintptr(unsafe.Pointer(&b[0]))) + uint64(len(b))}
	want := append(append([]byte(nil), a...), b...)
	for _, novm := range []bool{false, true} {
		s := &liveSource{pid: os.Getpid(), mem: mem}
		s.novm.Store(novm)
		var f memFile
		if err := s.copyTo(&f, 100, []Region{ra, rb}, make([]byte, 1<<20)); err != nil {
			t.Fatalf("novm %v: %v", novm, err)
		}
		if !bytes.Equal(f.b[100:], want) {
			t.Errorf("novm %v: copied %d bytes, not the ranges", novm, len(f.b)-100)
		}
		if err := s.copyTo(&f, 0, []Region{ra, {Lo: 8, Hi: 4096}}, make([]byte, 1<<20)); err == nil {
			t.Errorf("novm %v: a range at address 8 copies", novm)
		}
		if err := s.copyTo(&f, 0, []Region{ra}, make([]byte, 16)); err == nil {
			t.Errorf("novm %v: ranges larger than the buffer copy", novm)
		}
	}
	runtimeKeep(a, b)
}

//go:noinline
func runtimeKeep(...any) {}

// TestUrgently: what runs while a process is stopped runs at nice -10 where memdoctor may, on
// a thread whose nice value is put back after.
func TestUrgently(t *testing.T) {
	var tid, during int
	Urgently(func() error {
		tid = unix.Gettid()
		during, _ = unix.Getpriority(unix.PRIO_PROCESS, tid)
		return nil
	})
	after, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		t.Skip("the thread ended")
	}
	if os.Geteuid() == 0 && 20-during != urgentNice {
		t.Errorf("nice %d while urgent, want %d", 20-during, urgentNice)
	}
	if 20-after == urgentNice {
		t.Errorf("nice %d after Urgently: not put back", 20-after)
	}
}
