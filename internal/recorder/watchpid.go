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
// listens on), then watches it as Watch does, sampling that process's /proc. A process that
// serves neither is read from its memory (SourceMemory), as is any with cfg.Source
// SourceMemory.
func WatchPID(ctx context.Context, cfg Config, pid int) (Result, error) {
	cfg.defaults()
	if err := checkPID(cfg.FS, pid); err != nil {
		return Result{}, fmt.Errorf("process %d: %w", pid, err)
	}
	if cfg.Source == SourceMemory {
		return watchMemory(ctx, cfg, pid, "--source memory", "")
	}
	url, tried := findService(ctx, cfg, pid)
	if url == "" {
		why := fmt.Sprintf("process %d serves neither net/http/pprof nor a memdoctor agent on the TCP ports it listens on %v", pid, tried)
		if len(tried) == 0 {
			why = fmt.Sprintf("process %d listens on no TCP port: it serves neither net/http/pprof nor a memdoctor agent", pid)
		}
		if cfg.Source == SourceAuto {
			cfg.Logger.Info(why + ": reading it from its memory")
			return watchMemory(ctx, cfg, pid, why, "")
		}
		return Result{}, fmt.Errorf("%s: import _ \"net/http/pprof\" and serve it, or give the service's URL", why)
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
