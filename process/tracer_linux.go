package process

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tracer stops and resumes every thread of one process with ptrace. It seizes (PTRACE_SEIZE)
// and interrupts (PTRACE_INTERRUPT) rather than attaching with SIGSTOP: a seized thread that
// its tracer abandons, even by dying of SIGKILL, is resumed by the kernel, so the target is
// never left stopped. Every ptrace request of a tracee must come from the thread that seized
// it, so all of them run on one locked OS thread.
type tracer struct {
	pid     int
	calls   chan func()
	stopped map[int]*stoppedThread // by thread id, while stopped
	since   time.Time              // when the first thread was stopped
	// lost: a thread could not be detached (it was killed while stopped, and waits for its
	// tracer to reap it): ending the tracer's thread lets it go.
	lost bool
}

// stoppedThread is one stopped thread: its registers, and the signal it was stopped with, if
// any, which is handed back to it when it is resumed so that no signal is lost.
type stoppedThread struct {
	tid  int
	regs threadRegs
	sig  syscall.Signal
}

// maxThreads bounds how many threads a stop takes: a process listing more is refused rather
// than stopped for a long time.
const maxThreads = 100000

func newTracer(pid int) *tracer {
	t := &tracer{pid: pid, calls: make(chan func())}
	go func() {
		runtime.LockOSThread()
		for fn := range t.calls {
			fn()
		}
		// Every thread detached, the thread goes back to the runtime: ended, it would take
		// with it a child the caller started with a parent-death signal (the kernel sends it
		// when the thread that started the child ends). One that could not be detached is let
		// go by ending the thread, which the kernel takes as its tracer's exit.
		if !t.lost {
			runtime.UnlockOSThread()
		}
	}()
	return t
}

// do runs fn on the tracer's thread.
func (t *tracer) do(fn func()) {
	done := make(chan struct{})
	t.calls <- func() { fn(); close(done) }
	<-done
}

// close ends the tracer's thread; call it only after resume.
func (t *tracer) close() { close(t.calls) }

// stop seizes and interrupts every thread of the process, until a listing of its threads finds
// none that is not stopped (a thread created meanwhile is found by the next listing). On an
// error every thread stopped so far is resumed.
func (t *tracer) stop() (err error) {
	t.do(func() { err = t.stopAll() })
	if err != nil {
		t.resume()
	}
	return err
}

func (t *tracer) stopAll() error {
	t.stopped = make(map[int]*stoppedThread)
	t.since = time.Now()
	for pass := 0; ; pass++ {
		tids, err := listThreads(t.pid)
		if err != nil {
			return err
		}
		if len(tids) > maxThreads {
			return fmt.Errorf("process %d has %d threads, more than the %d memdoctor stops", t.pid, len(tids), maxThreads)
		}
		fresh := 0
		for _, tid := range tids {
			if _, ok := t.stopped[tid]; ok {
				continue
			}
			fresh++
			if err := t.stopThread(tid); err != nil {
				return err
			}
		}
		if fresh == 0 {
			if len(t.stopped) == 0 {
				return fmt.Errorf("process %d: %w", t.pid, ErrExited)
			}
			return nil
		}
		if pass > 1000 {
			return fmt.Errorf("process %d keeps creating threads faster than they can be stopped", t.pid)
		}
	}
}

// stopThread seizes one thread, interrupts it and waits until it stops. A thread that exits
// meanwhile is skipped.
func (t *tracer) stopThread(tid int) error {
	if err := unix.PtraceSeize(tid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // exited since the listing
		}
		return attachError(t.pid, err)
	}
	st := &stoppedThread{tid: tid}
	t.stopped[tid] = st
	if err := unix.PtraceInterrupt(tid); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("interrupting thread %d of process %d: %w", tid, t.pid, err)
	}
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(tid, &ws, unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			delete(t.stopped, tid)
			if errors.Is(err, unix.ECHILD) {
				return nil // gone
			}
			t.lost = true // seized, and neither stopped nor gone
			return fmt.Errorf("waiting for thread %d of process %d to stop: %w", tid, t.pid, err)
		}
		if ws.Exited() || ws.Signaled() {
			delete(t.stopped, tid)
			return nil
		}
		if !ws.Stopped() {
			continue
		}
		// A PTRACE_EVENT_STOP is our interrupt (or a group stop); any other stop is a signal
		// being delivered, which is handed back on resume.
		if uint32(ws)>>16 != unix.PTRACE_EVENT_STOP {
			st.sig = ws.StopSignal()
		}
		regs, err := getRegs(tid)
		if err != nil {
			return fmt.Errorf("reading the registers of thread %d of process %d: %w", tid, t.pid, err)
		}
		st.regs = regs
		return nil
	}
}

// resume detaches from every stopped thread, handing back any signal a stop held, and returns
// how long the process was stopped. It is safe to call more than once.
func (t *tracer) resume() (stoppedFor time.Duration) {
	t.do(func() {
		for tid, st := range t.stopped {
			// A failure means the thread is gone (or dying): nothing is left stopped either
			// way, but what is left of it is the tracer's to let go.
			if ptraceDetach(tid, int(st.sig)) != nil {
				t.lost = true
			}
		}
		if t.stopped != nil {
			stoppedFor = time.Since(t.since)
		}
		t.stopped = nil
	})
	return stoppedFor
}

// threads returns the stopped threads in thread-id order (the process's main thread first).
func (t *tracer) threads() []*stoppedThread {
	out := make([]*stoppedThread, 0, len(t.stopped))
	for _, st := range t.stopped {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tid < out[j].tid })
	return out
}

func ptraceDetach(tid, sig int) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(tid), 0, uintptr(sig), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// listThreads lists /proc/PID/task.
func listThreads(pid int) ([]int, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrExited)
		}
		return nil, fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	defer f.Close()
	var tids []int
	for {
		names, err := f.Readdirnames(4096)
		for _, n := range names {
			if tid, err := strconv.Atoi(n); err == nil {
				tids = append(tids, tid)
			}
		}
		if err != nil || len(tids) > maxThreads {
			break
		}
	}
	sort.Ints(tids)
	return tids, nil
}

// attachError says why ptrace refused and what to grant.
func attachError(pid int, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("process %d: %w (%v)", pid, ErrPermission, err)
	}
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("process %d: %w", pid, ErrExited)
	}
	return fmt.Errorf("stopping process %d with ptrace: %w", pid, err)
}
