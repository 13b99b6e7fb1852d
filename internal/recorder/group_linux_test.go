package recorder

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestProgramOutlivesTheThreadThatStartedIt: the program run starts (startProgram) is killed by the kernel
// when memdoctor dies (its parent-death signal), and not when the thread that asked for it
// ends, as a thread does when a goroutine locked to it returns (process.Copy's workers did,
// while a program run had started was stopped to be copied: it was killed in the middle).
// Here a goroutine locked to its thread starts the program and returns, which ends the
// thread; the program lives on.
func TestProgramOutlivesTheThreadThatStartedIt(t *testing.T) {
	w, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Manifest{Mode: "run"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(session.StatusComplete, "")
	cfg := Config{Command: []string{"sleep", "60"}, Stdout: io.Discard, Stderr: io.Discard}
	cfg.defaults()
	r := newRecorder(cfg, w)
	tid := make(chan int)
	type start struct {
		p   *program
		err error
	}
	started := make(chan start)
	var pid int
	var held []chan struct{} // goroutines holding the main thread, which never ends
	defer func() {
		for _, h := range held {
			close(h)
		}
	}()
	for {
		release := make(chan struct{})
		go func() {
			runtime.LockOSThread() // unlocked only on the main thread: this one ends with the goroutine
			id := syscall.Gettid()
			tid <- id
			if id == os.Getpid() {
				<-release
				runtime.UnlockOSThread()
				return
			}
			p, err := startProgram(cfg, r)
			started <- start{p, err}
		}()
		id := <-tid
		if id == os.Getpid() {
			held = append(held, release)
			continue
		}
		st := <-started
		if st.err != nil {
			t.Fatal(st.err)
		}
		pid = st.p.cmd.Process.Pid
		defer func() {
			signalGroup(pid, syscall.SIGKILL)
			<-st.p.exited
		}()
		// The kernel sends the parent-death signal as the thread ends, before the thread
		// leaves /proc.
		task := "/proc/self/task/" + strconv.Itoa(id)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(task); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) { // a hang detector
				t.Fatalf("thread %d did not end", id)
			}
		}
		break
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if os.IsNotExist(err) {
		t.Fatal("the program is gone (killed, and reaped) once the thread that started it ended")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if !strings.HasPrefix(v, "S") && !strings.HasPrefix(v, "R") {
				t.Errorf("the program is %s once the thread that started it ended", v)
			}
		case "SigPnd", "ShdPnd":
			if mask, err := strconv.ParseUint(v, 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				t.Errorf("the program has a SIGKILL pending (%s %s) once the thread that started it ended", k, v)
			}
		}
	}
}
