package recorder

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// loadStopGrace is how long the load generator may take to exit after SIGINT.
const loadStopGrace = 2 * time.Second

// loadLoop runs cfg.Load beside the program: it waits until the target is ready, starts the
// command in a process group of its own with the target's PID and pprof URL in its
// environment (MEMDOCTOR_TARGET_PID, MEMDOCTOR_TARGET_PPROF: the address to drive load at),
// and stops it when ctx is done. The manifest notes when it started and whether it ended
// early: a run measured partly without its load is not the run that was asked for.
func (r *recorder) loadLoop(ctx context.Context) {
	pid, url, ok := r.awaitReady(ctx)
	if !ok {
		return
	}
	cmd := exec.Command("sh", "-c", r.cfg.Load)
	cmd.Env = append(os.Environ(), "MEMDOCTOR_TARGET_PID="+strconv.Itoa(pid), "MEMDOCTOR_TARGET_PPROF="+url)
	cmd.Stdout, cmd.Stderr = r.cfg.Stderr, r.cfg.Stderr
	cmd.SysProcAttr = groupAttr()
	started := time.Now()
	if err := startCmd(cmd); err != nil {
		r.addNote("the load generator (--load) could not start: %v", err)
		return
	}
	r.addNote("the load generator (--load) started %s after the program, once the target was ready", started.Sub(r.start).Round(100*time.Millisecond))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		r.addNote("the load generator (--load) ended by itself %s after it started (%s): the rest of the run had no load from it",
			time.Since(started).Round(100*time.Millisecond), exitDetail(err))
		return
	case <-ctx.Done():
	}
	signalGroup(cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(loadStopGrace):
		signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	signalGroup(cmd.Process.Pid, syscall.SIGKILL) // leftovers of its group, if any
}

// awaitReady waits until the target is ready for load: its pprof endpoint was found (it
// serves HTTP), or LoadWait has passed since the Go target was found (it serves no pprof).
func (r *recorder) awaitReady(ctx context.Context) (pid int, pprofURL string, ok bool) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var foundAt time.Time
	for {
		pid, c := r.target()
		switch {
		case c != nil:
			return pid, c.BaseURL(), true
		case pid != 0 && foundAt.IsZero():
			foundAt = time.Now()
		case pid != 0 && time.Since(foundAt) >= r.cfg.LoadWait:
			return pid, "", true
		}
		select {
		case <-ctx.Done():
			return 0, "", false
		case <-t.C:
		}
	}
}
