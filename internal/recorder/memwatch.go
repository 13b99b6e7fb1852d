package recorder

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/session"
)

// watchMemory watches the local Go process pid through its memory (SourceMemory): /proc and
// cgroup every Sample, the runtime's figures every Sample, the heap profile every Interval, a
// goroutine profile at the leak check's pace, until ctx is done, cfg.Duration has passed or
// the process exits. why says why this source was chosen. A process memdoctor cannot read, or
// that does not link the function links names ("" for none), is refused before any session
// is made.
func watchMemory(ctx context.Context, cfg Config, pid int, why string, links string) (Result, error) {
	p, err := inspect(cfg.FS, pid, 0, 0)
	if err != nil {
		return Result{}, fmt.Errorf("process %d: %w", pid, err)
	}
	rd, err := memread.Open(pid)
	if err != nil {
		if cfg.Source == SourceMemory {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("%s, and reading its memory failed: %w", why, err)
	}
	if links != "" && !rd.HasFunc(links) {
		rd.Close()
		return Result{}, fmt.Errorf("%s, but that process links no %s: it is not the service (a proxy or a port-forward?); pass --pid with the service's own PID", why, links)
	}
	if links != "" {
		why += ", a Go program that links " + links[:strings.LastIndexByte(links, '.')] + " as the service does"
	}
	start := time.Now()
	m := session.Manifest{MemdoctorVersion: cfg.Version, Mode: cfg.Mode, Start: start.UTC(), Flags: cfg.Flags, Target: targetInfo(cfg.FS, p)}
	if cfg.MemoryBudget > 0 {
		m.MemoryBudgetBytes, m.MemoryBudgetSource = cfg.MemoryBudget, "flag"
	} else if cg, err := cfg.FS.Cgroup(pid); err == nil && cg.LimitBytes > 0 {
		m.MemoryBudgetBytes, m.MemoryBudgetSource = cg.LimitBytes, "cgroup"
	}
	w, err := session.CreateFS(cfg.SessionFS, cfg.Out, m)
	if err != nil {
		rd.Close()
		return Result{}, err
	}
	r := newRecorder(cfg, w)
	r.pid, r.targetName = pid, p.Name
	if err := r.useMemory(rd, pid, why); err != nil {
		w.Close(session.StatusFailed, err.Error())
		return Result{}, err
	}
	r.log.Info("reading the process's memory", "pid", pid, "exe", p.Exe, "go", p.GoVersion)
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	loops.Go(func() { r.sampleLoop(loopCtx, nil) })
	loops.Go(func() { r.memLoop(loopCtx) })
	res := r.awaitWatchEnd(ctx, fmt.Sprintf("pid %d", pid), deadline)
	stopLoops()
	loops.Wait()
	running := res.Status == session.StatusComplete || res.Status == session.StatusInterrupted
	r.closeMemory(running)
	r.readHolders(res, running)
	r.noteGCAsks()
	r.noteAttempts()
	r.flushManifest()
	if err := w.Close(res.Status, res.Detail); err != nil {
		r.writeFailed(err)
	}
	return res, r.writeError()
}
