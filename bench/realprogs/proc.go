package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct free ports.
func freePorts(n int) ([]int, error) {
	// Hold every listener until all are chosen, so the kernel cannot hand one out twice.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// process is a started program in its own process group.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// startProcess starts bin with args in dir, its output going to out, in a new process group so
// that stop can end it and anything it started.
func startProcess(bin string, args, env []string, dir string, out io.Writer) (*process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	// When out is not a file, Wait copies through a pipe that a surviving child could hold
	// open; do not wait for it past a second after the process exits.
	cmd.WaitDelay = time.Second
	if err := startGroup(cmd); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL when it is still there after grace.
// A program whose handlers are stuck (the leak under test) may never exit on SIGTERM.
func (p *process) stop(grace time.Duration) {
	pgid := p.cmd.Process.Pid
	signalGroup(pgid, false)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	// Kill the group even when the leader exited: it may have left children behind.
	signalGroup(pgid, true)
	<-p.done
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitReady polls url until it answers 200, the process exits, or timeout passes.
func waitReady(ctx context.Context, p *process, url string, timeout time.Duration) error {
	if !strings.HasPrefix(url, "http") {
		return waitTCP(ctx, p, url, timeout)
	}
	deadline := time.Now().Add(timeout)
	client := probeClient(2 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if p.exited() {
			return fmt.Errorf("the program exited before %s answered: %v", url, p.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s: %w", url, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startBusy starts n busy loops, each a shell spinning in its own process group, as
// bench/busy does, and returns the function that stops them.
func startBusy(n int) (func(), error) {
	var procs []*process
	stop := func() {
		for _, p := range procs {
			p.stop(0)
		}
	}
	for i := 0; i < n; i++ {
		p, err := startProcess("/bin/sh", []string{"-c", "while :; do :; done"}, nil, "", io.Discard)
		if err != nil {
			stop()
			return nil, errors.Join(errors.New("start busy loops"), err)
		}
		procs = append(procs, p)
	}
	return stop, nil
}

// waitTCP waits until addr accepts a TCP connection: a program run without its profiling
// endpoint (-memory) serves.
func waitTCP(ctx context.Context, p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if p.exited() {
			return fmt.Errorf("the program exited before %s answered: %v", addr, p.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s: %w", addr, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
