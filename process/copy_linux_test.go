package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	mem, err := OpenLiveMemory(os.Getpid())
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
		if _, err := s.copyTo(&f, 100, []Region{ra, rb}, make([]byte, 1<<20)); err != nil {
			t.Fatalf("novm %v: %v", novm, err)
		}
		if !bytes.Equal(f.b[100:], want) {
			t.Errorf("novm %v: copied %d bytes, not the ranges", novm, len(f.b)-100)
		}
		if _, err := s.copyTo(&f, 0, []Region{ra, {Lo: 8, Hi: 4096}}, make([]byte, 1<<20)); err == nil {
			t.Errorf("novm %v: a range at address 8 copies", novm)
		}
		if _, err := s.copyTo(&f, 0, []Region{ra}, make([]byte, 16)); err == nil {
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

// TestLiveSourceHole copies three pages of this very process whose middle one was unmapped:
// process_vm_readv stops at it, /proc/self/mem reads up to it; the copy says where it stopped
// (the first page in the file), and a copy that may skip it copies the pages around it.
func TestLiveSourceHole(t *testing.T) {
	page := os.Getpagesize()
	b, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = byte(i/page + 1)
	}
	defer unix.Munmap(b)
	lo := uint64(uintptr(unsafe.Pointer(&b[0])))
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(lo)+uintptr(page), uintptr(page), 0); e != 0 {
		t.Fatal(e)
	}
	mem, err := OpenLiveMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, novm := range []bool{false, true} {
		s := &liveSource{pid: os.Getpid(), mem: mem}
		s.novm.Store(novm)
		var f memFile
		_, err := s.copyTo(&f, 0, []Region{{lo, lo + uint64(3*page)}}, make([]byte, 3*page))
		var ue *unreadableError
		if !errors.As(err, &ue) || ue.At != lo+uint64(page) {
			t.Fatalf("novm %v: %v, want the memory at %#x cannot be read", novm, err, lo+uint64(page))
		}
		if len(f.b) != page || !bytes.Equal(f.b, b[:page]) {
			t.Errorf("novm %v: %d bytes in the file, want the first page", novm, len(f.b))
		}
		c := newTestCopy(t, s)
		if err := c.AddReadable(context.Background(), []Region{{lo, lo + uint64(3*page)}}); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Skipped(), []Region{{lo + uint64(page), lo + uint64(2*page)}}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("novm %v: skipped %v, want %v", novm, got, want)
		}
		got := make([]byte, page)
		for _, p := range []int{0, 2} {
			if _, err := c.ReadMemory(got, lo+uint64(p*page)); err != nil || !bytes.Equal(got, b[p*page:(p+1)*page]) {
				t.Errorf("novm %v: page %d: %v", novm, p, err)
			}
		}
		err = c.Add(context.Background(), []Region{{lo, lo + uint64(3*page)}})
		if err == nil || !strings.Contains(err.Error(), "no mapping holds it") {
			t.Errorf("novm %v: Add over the hole: %v, want an error saying no mapping holds it", novm, err)
		}
	}
}

// TestLiveSourceGone: a process that ended while it was copied (its memory gone: /proc/PID/mem
// reads nothing) is ErrExited, not memory that cannot be read.
func TestLiveSourceGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mem, err := OpenLiveMemory(cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	defer mem.Close()
	// Its memory map as read once it was stopped: its page map is asked before its memory.
	ms, err := readMappings(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	mem.res.setMaps(ms)
	anon := Region{0x400000, 0x401000}
	for _, m := range ms {
		if m.anon && m.readable {
			anon = Region{m.Lo, m.Lo + 4096}
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	s := &liveSource{pid: cmd.Process.Pid, mem: mem}
	for _, r := range []Region{{0x400000, 0x401000}, anon} {
		var f memFile
		if _, err := s.copyTo(&f, 0, []Region{r}, make([]byte, 4096)); !errors.Is(err, ErrExited) {
			t.Errorf("copying %#x of a process that is gone: %v, want ErrExited", r.Lo, err)
		}
	}
}

// TestUrgentCopyEndsNoThread: the workers of a copy made while a process is stopped (Urgent),
// each locked to its thread, give their threads back to the runtime: none ends (the kernel
// sends a child its parent-death signal when the thread that started it ends: a program the
// caller started would be killed). Goroutines locked to threads one after the other are handed
// the idle threads, the workers' among them, until the runtime makes a new one: a worker's
// thread not handed out is busy, and still there.
func TestUrgentCopyEndsNoThread(t *testing.T) {
	src := &threadsSource{tids: map[int]bool{}}
	c := newTestCopy(t, src)
	c.Urgent = true
	if err := c.Add(context.Background(), []Region{{0x100000, 0x100000 + 4*copyChunk}}); err != nil {
		t.Fatal(err)
	}
	if len(src.tids) == 0 {
		t.Fatal("no worker read")
	}
	for _, id := range endedThreads(src.tids) {
		t.Errorf("thread %d, a worker's, ended", id)
	}
}

// TestTracerEndsNoThread: the tracer's thread, once it has stopped a process and let it go,
// is given back to the runtime rather than ended.
func TestTracerEndsNoThread(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	tr := newTracer(cmd.Process.Pid)
	if err := tr.stop(); err != nil {
		tr.close()
		t.Fatal(err)
	}
	var tid int
	tr.do(func() { tid = unix.Gettid() })
	tr.resume()
	tr.close()
	for _, id := range endedThreads(map[int]bool{tid: true}) {
		t.Errorf("thread %d, the tracer's, ended", id)
	}
}

// endedThreads returns those of tids (threads of this process that ran a goroutine locked to
// them) that have ended. Goroutines locked to threads one after the other are handed the idle
// threads, until the runtime makes a new one: a thread of tids not handed out is busy, and
// still there, or it ended.
func endedThreads(tids map[int]bool) []int {
	before := map[int]bool{}
	if tasks, err := os.ReadDir("/proc/self/task"); err == nil {
		for _, e := range tasks {
			id, _ := strconv.Atoi(e.Name())
			before[id] = true
		}
	}
	var release []chan struct{}
	defer func() {
		for _, r := range release {
			close(r)
		}
	}()
	seen := map[int]bool{}
	for i := 0; i < 256 && len(seen) < len(tids); i++ {
		tid, r := make(chan int), make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid <- unix.Gettid()
			<-r
		}()
		release = append(release, r)
		id := <-tid
		if tids[id] {
			seen[id] = true
		}
		if !before[id] {
			break // a new thread: no idle one was left
		}
	}
	var ended []int
	for id := range tids {
		if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(id)); !seen[id] && err != nil {
			ended = append(ended, id)
		}
	}
	return ended
}

// threadsSource copies zeros and records the threads it ran on.
type threadsSource struct {
	mu   sync.Mutex
	tids map[int]bool
}

func (s *threadsSource) copyTo(w io.WriterAt, off int64, rs []Region, buf []byte) (int64, error) {
	s.mu.Lock()
	s.tids[unix.Gettid()] = true
	s.mu.Unlock()
	n := 0
	for _, r := range rs {
		n += int(r.Hi - r.Lo)
	}
	clear(buf[:n])
	_, err := w.WriteAt(buf[:n], off)
	return 0, err
}

func (s *threadsSource) where(uint64) string { return "" }
