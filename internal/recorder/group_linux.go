package recorder

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// groupAttr starts the program in a process group of its own, which memdoctor signals as a
// whole, and has the kernel kill it (SIGKILL: a program may ignore SIGTERM) should memdoctor
// die first without stopping it, killed by SIGKILL or the OOM killer. The kernel does this for
// the program memdoctor started, not for the processes that program starts in turn. Start a
// command with these attributes through startCmd.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawner is the one thread that starts the commands memdoctor runs (the program, the load
// generator), and it never ends. The kernel sends a child its parent-death signal when the
// thread that started it ends, not when memdoctor does (see go.dev/issue/27505), and the Go
// runtime ends a thread whenever a goroutine locked to it returns: started from any thread,
// the program was killed (SIGKILL) when that thread went on to run such a goroutine and
// ended. It did, now and then, in the middle of reading the program's holders, while the
// program was stopped to be copied ("copying 8192 bytes at 0x182778df4000 of process N:
// EOF": its memory was gone).
var spawner struct {
	once  sync.Once
	calls chan func()
}

// startCmd starts cmd from the spawner's thread.
func startCmd(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.calls = make(chan func())
		go func() {
			// Never unlocked, and the goroutine never returns: the thread lives as long as
			// memdoctor.
			runtime.LockOSThread()
			for fn := range spawner.calls {
				fn()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.calls <- func() { done <- cmd.Start() }
	return <-done
}
