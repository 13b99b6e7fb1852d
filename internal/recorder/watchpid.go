package recorder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/collect/agentclient"
)

// WatchPID attaches to the local process pid, as gops does: it finds the port its
// net/http/pprof or embedded memdoctor agent serves on (among the TCP ports the process
// listens on), then watches it as Watch does, sampling that process's /proc.
func WatchPID(ctx context.Context, cfg Config, pid int) (Result, error) {
	cfg.defaults()
	if err := checkPID(cfg.FS, pid); err != nil {
		return Result{}, fmt.Errorf("process %d: %w", pid, err)
	}
	url, tried := findService(ctx, cfg, pid)
	if url == "" {
		return Result{}, fmt.Errorf("process %d serves neither net/http/pprof nor a memdoctor agent on the TCP ports it listens on %v: "+
			"import _ \"net/http/pprof\" and serve it, or give the service's URL", pid, tried)
	}
	cfg.Logger.Info("found the service's endpoint", "pid", pid, "url", url)
	cfg.PID = pid
	return Watch(ctx, cfg, url)
}

// findService returns the base URL of pid's pprof index, else of its agent, with the ports
// it tried.
func findService(ctx context.Context, cfg Config, pid int) (string, []int) {
	c, tried := findPprof(ctx, cfg.FS, pid)
	if c != nil {
		return c.BaseURL(), tried
	}
	var opts []agentclient.Option
	if cfg.Token != "" {
		opts = append(opts, agentclient.WithToken(cfg.Token))
	}
	return findAgent(ctx, cfg.FS, pid, opts)
}

// checkPID checks that pid is a process this machine's /proc shows.
func checkPID(fsys procfs.FS, pid int) error {
	if !procSupported {
		return fmt.Errorf("watching a process by PID needs Linux: memdoctor reads its /proc (this is %s); give the service's URL instead", runtime.GOOS)
	}
	if pid <= 0 {
		return errors.New("not a process ID")
	}
	if _, err := fsys.Stat(pid); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no such process on this machine (or in this PID namespace)")
		}
		return err
	}
	return nil
}
