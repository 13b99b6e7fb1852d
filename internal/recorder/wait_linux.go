package recorder

import (
	"errors"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// waitExit waits for the program memdoctor started to end and returns cmd.Wait's result.
// memdoctor may stop that program with ptrace while it runs (goroutine profiles read from
// its memory). Being its parent as well as its tracer, a plain wait for it would also get
// those stops: it would take one for the program's end, and take it from the tracer, which
// would then wait for ever. So this waits for the program's end alone, without reaping
// anything (WNOWAIT: a stop stays for the tracer to collect), and only then reaps it with
// cmd.Wait.
func waitExit(cmd *exec.Cmd) error {
	pid := cmd.Process.Pid
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			break // cmd.Wait says what it is
		}
		switch info.Code {
		case cldExited, cldKilled, cldDumped:
			return cmd.Wait()
		}
		// A stop (the tracer's, or a signal's): it stays waitable until the tracer (or
		// nobody) collects it; look again shortly.
		time.Sleep(2 * time.Millisecond)
	}
	return cmd.Wait()
}

// The si_code values of SIGCHLD (and waitid) that say a child ended.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)
