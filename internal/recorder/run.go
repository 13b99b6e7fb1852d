package recorder

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// ErrNotGo reports a target that is not a Go program.
var ErrNotGo = errors.New("not a Go program")

// ErrNeedsLinux reports a recording that needs /proc on a system without it.
var ErrNeedsLinux = fmt.Errorf("starting and recording a program needs Linux: memdoctor follows it through /proc (this is %s); "+
	"here, serve net/http/pprof in the program and use memdoctor watch URL", runtime.GOOS)

// CanRun returns ErrNeedsLinux where Run cannot work.
func CanRun() error {
	if !procSupported {
		return ErrNeedsLinux
	}
	return nil
}

// procSupported is true where /proc exists; tests turn it off to see what other systems get.
var procSupported = runtime.GOOS == "linux"

// ErrNothingMeasured reports a program that exited before memdoctor found a Go program to
// measure in its process tree.
var ErrNothingMeasured = errors.New("exited before anything could be measured")

// notGoPatience is how long a non-Go process may stand alone in the tree, without a Go
// program appearing under it, before memdoctor gives up on it.
const notGoPatience = 5 * time.Second

// Run starts cfg.Command with gctrace on, records a session while it runs and stops it
// gracefully when ctx is done or cfg.Duration has passed. It returns when the session is
// closed. An error means nothing useful could be recorded (the command could not start, the
// session directory could not be written, the target is not a Go program or exited before it
// could be measured), or that the session could not be written whole (ErrSessionWrite).
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg.defaults()
	if len(cfg.Command) == 0 {
		return Result{}, errors.New("no command to run")
	}
	if err := CanRun(); err != nil {
		return Result{}, err
	}
	w, err := session.CreateFS(cfg.SessionFS, cfg.Out, session.Manifest{
		MemdoctorVersion: cfg.Version, Mode: cfg.Mode, Command: cfg.Command,
		Start: time.Now().UTC(), Flags: cfg.Flags,
	})
	if err != nil {
		return Result{}, err
	}
	r := newRecorder(cfg, w)
	if cfg.MemoryBudget > 0 {
		r.note(func(m *session.Manifest) { m.MemoryBudgetBytes, m.MemoryBudgetSource = cfg.MemoryBudget, "flag" })
	}
	p, err := startProgram(cfg, r)
	if err != nil {
		w.Close(session.StatusFailed, err.Error())
		return Result{}, err
	}
	notGo := make(chan error, 1)
	disc := &runDiscovery{r: r, tw: newTreeWatcher(cfg.FS, r.root, p.startedAfter), notGo: notGo, root: r.root}
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	loops.Go(func() { r.sampleLoop(loopCtx, disc.step) })
	loops.Go(func() { r.profileLoop(loopCtx) })
	loops.Go(func() { r.leakLoop(loopCtx) })
	loops.Go(func() { r.memLoop(loopCtx) })
	if cfg.Load != "" {
		loops.Go(func() { r.loadLoop(loopCtx) })
	}

	res, rootExited, runErr := r.awaitEnd(ctx, p, notGo)
	running := res.Status == session.StatusComplete || res.Status == session.StatusInterrupted
	if running {
		r.finalSnapshot()
	}
	stopLoops()
	loops.Wait()
	r.closeMemory(running)
	if runErr == nil && res.Status == session.StatusTargetExited && !r.found() {
		runErr = notMeasured(p.cmd, time.Since(r.start), res.TargetExit)
		res.Status, res.Detail = session.StatusFailed, runErr.Error()
	}
	if runErr == nil {
		r.readHolders(res, running) // while the program runs: it is stopped next
	}
	if !rootExited {
		res.TargetExit = stopGroup(p.cmd, p.exited, cfg.Grace, cfg.Abort, r.log)
	}
	waitTimeout(&p.stderr, 2*time.Second)
	r.noteGCTrace()
	r.noteIndex()
	r.noteAttempts()
	r.flushManifest() // the last counts
	if err := w.Close(res.Status, res.Detail); err != nil {
		r.writeFailed(err)
	}
	if werr := r.writeError(); werr != nil && runErr == nil {
		runErr = werr
	}
	return res, runErr
}

// found reports whether a Go target was found in the tree.
func (r *recorder) found() bool {
	pid, _ := r.target()
	return pid != 0
}

// notMeasured explains a program that ended before a Go target was found in its tree: not a
// Go program (its binary has no Go build info), or one that exited too soon. The non-Go
// check of discovery needs notGoPatience; this one covers what exits sooner.
func notMeasured(cmd *exec.Cmd, ran time.Duration, code int) error {
	took := "under 1ms"
	if ran >= time.Millisecond {
		took = ran.Round(time.Millisecond).String()
	}
	if _, err := buildinfo.ReadFile(cmd.Path); err != nil {
		return fmt.Errorf("%s is %w: it has no Go build info (it exited after %s, status %d); memdoctor diagnoses Go programs", cmd.Path, ErrNotGo, took, code)
	}
	return fmt.Errorf("%s %w: it ran for %s (status %d)", cmd.Path, ErrNothingMeasured, took, code)
}

// program is the process memdoctor started.
type program struct {
	cmd *exec.Cmd
	// startedAfter is the clock read just before the fork: the program's root process started
	// after it, which bounds when every process of its tree started (treeWatcher).
	startedAfter time.Time
	exited       chan error     // receives cmd.Wait's result, once
	stderr       sync.WaitGroup // the goroutine splitting the program's stderr
}

// startProgram starts cfg.Command in its own process group, with gctrace added to GODEBUG,
// its stdout passed through and its stderr split between the terminal and the session.
func startProgram(cfg Config, r *recorder) (*program, error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	env := os.Environ()
	for _, kv := range cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env = setEnv(env, k, v)
		}
	}
	cmd.Env = setEnv(env, "GODEBUG", WithGCTrace(getEnv(env, "GODEBUG")))
	cmd.Stdin = os.Stdin
	cmd.Stdout = cfg.Stdout
	cmd.SysProcAttr = groupAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	before := time.Now()
	if err := startCmd(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Command[0], unwrapExec(err))
	}
	r.start, r.root = time.Now(), cmd.Process.Pid
	p := &program{cmd: cmd, startedAfter: before, exited: make(chan error, 1)}
	p.stderr.Go(func() {
		if err := splitStderr(stderr, cfg.Stderr, cfg.ShowGCTrace, r.gc); err != nil {
			r.log.Debug("reading the program's stderr", "err", err)
		}
	})
	go func() { p.exited <- waitExit(cmd) }()
	return p, nil
}

// awaitEnd waits for what ends the recording: the program's exit, the target's, the user,
// the duration, or a target that is not a Go program.
func (r *recorder) awaitEnd(ctx context.Context, p *program, notGo <-chan error) (res Result, rootExited bool, err error) {
	var timeout <-chan time.Time
	if d := r.cfg.Duration; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	res = Result{Dir: r.cfg.Out, TargetExit: -1}
	select {
	case werr := <-p.exited:
		rootExited = true
		res.Status, res.Detail = session.StatusTargetExited, exitDetail(werr)
		res.TargetExit = exitCode(werr)
		signalGroup(p.cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
		r.ended()
	case <-r.gone:
		pid, _ := r.target()
		res.Status, res.Detail = session.StatusTargetExited, fmt.Sprintf("the target (pid %d) exited", pid)
	case <-ctx.Done():
		res.Status, res.Detail = session.StatusInterrupted, "stopped by the user"
	case <-r.cfg.Abort:
		res.Status, res.Detail = session.StatusInterrupted, "stopped at once by the user"
	case <-timeout:
		res.Status, res.Detail = session.StatusComplete, fmt.Sprintf("ran for %s", r.cfg.Duration)
	case err = <-notGo:
		res.Status, res.Detail = session.StatusFailed, err.Error()
	}
	return res, rootExited, err
}

// noteGCTrace records in the manifest the origin of the target's gctrace clock and what was
// left out.
func (r *recorder) noteGCTrace() {
	gs := r.gc.stats(time.Now())
	r.note(func(m *session.Manifest) {
		if !gs.Base.IsZero() {
			m.GCTraceBase = gs.Base.UTC()
		}
		if gs.Dropped > 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("%d gctrace line(s) came from other processes of the tree (such as the go command) and were left out", gs.Dropped))
		}
		if gs.Lost > 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("%d gctrace line(s) could not be attributed to the target", gs.Lost))
		}
	})
}

// finalSnapshot takes one last round of profiles before the target is stopped, so the
// session ends with the state at its end. Abort cuts it short.
func (r *recorder) finalSnapshot() {
	if _, c := r.target(); c != nil {
		ctx, cancel := r.abortable(5 * time.Second)
		defer cancel()
		r.snapshot(ctx, c, true, true)
	}
}

// abortable returns a context that ends after d, or when cfg.Abort is closed.
func (r *recorder) abortable(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	if r.cfg.Abort != nil {
		go func() {
			select {
			case <-r.cfg.Abort:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// runDiscovery finds the target in the tree and then its pprof endpoint.
type runDiscovery struct {
	r        *recorder
	tw       *treeWatcher
	root     int
	notGo    chan error
	notGoAt  time.Time
	lockedAt time.Time
	nextScan time.Time
	reported bool
}

// step runs before every sample until it reports that discovery is over.
func (d *runDiscovery) step() bool {
	r := d.r
	pid, client := r.target()
	if pid == 0 {
		d.findTarget()
		return false
	}
	if client != nil || r.memory() != nil {
		return true
	}
	if r.cfg.PprofURL != "" {
		c, err := scrape.New(r.cfg.PprofURL)
		if err != nil {
			r.addNote("--pprof %s: %v", r.cfg.PprofURL, err)
			return true
		}
		r.setPprof(c)
		return true
	}
	if time.Now().Before(d.nextScan) {
		return false
	}
	d.nextScan = time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, tried := findPprof(ctx, r.cfg.FS, pid)
	if c != nil {
		r.log.Info("found the pprof endpoint", "url", c.BaseURL())
		r.setPprof(c)
		return true
	}
	if !d.reported && time.Since(d.lockedAt) > memoryAfter {
		d.reported = true
		why := fmt.Sprintf("no /debug/pprof/ endpoint found on the ports the target listens on %v", tried)
		err := d.readMemory(pid, why)
		if err == nil {
			return true
		}
		r.addNote("%s: no profiles until one appears; import _ \"net/http/pprof\" and serve it, or pass --pprof URL (reading the process's memory failed: %v)", why, err)
	}
	return false
}

// memoryAfter is how long run looks for a pprof endpoint before it reads the target's memory.
const memoryAfter = 5 * time.Second

// readMemory makes the target's memory the source of profiles and runtime figures.
func (d *runDiscovery) readMemory(pid int, why string) error {
	rd, err := memread.Open(pid)
	if err != nil {
		return err
	}
	return d.r.useMemory(rd, pid, why)
}

func (d *runDiscovery) findTarget() {
	ps := d.tw.processes()
	p, ok := d.tw.pick(ps)
	switch {
	case !ok:
		d.notGoAt = time.Time{}
	case p.GoVersion == "":
		if d.notGoAt.IsZero() {
			d.notGoAt = time.Now()
		} else if time.Since(d.notGoAt) > notGoPatience {
			select {
			case d.notGo <- fmt.Errorf("%s (pid %d) is %w: it has no Go build info; memdoctor diagnoses Go programs", p.Exe, p.PID, ErrNotGo):
			default:
			}
		}
	default:
		d.lock(p)
	}
}

func (d *runDiscovery) lock(p procInfo) {
	r := d.r
	d.lockedAt = time.Now()
	r.mu.Lock()
	r.pid, r.targetName = p.PID, p.Name
	r.mu.Unlock()
	r.gc.setTarget(p.Start)
	r.log.Info("watching the target", "pid", p.PID, "exe", p.Exe, "go", p.GoVersion)
	t := targetInfo(r.cfg.FS, p)
	budget := uint64(0)
	if r.cfg.MemoryBudget == 0 {
		if cg, err := r.cfg.FS.Cgroup(p.PID); err == nil && cg.LimitBytes > 0 {
			budget = cg.LimitBytes
		}
	}
	r.note(func(m *session.Manifest) {
		m.Target = t
		if budget > 0 {
			m.MemoryBudgetBytes, m.MemoryBudgetSource = budget, "cgroup"
		}
	})
}

// stopGroup stops the program's process group: SIGINT, then SIGKILL after the grace period,
// or at once when abort is closed (before or during the wait). It returns the program's exit
// code (-1 when killed).
func stopGroup(cmd *exec.Cmd, exited <-chan error, grace time.Duration, abort <-chan struct{}, log interface{ Info(string, ...any) }) int {
	pgid := cmd.Process.Pid
	select {
	case <-abort:
	default:
		signalGroup(pgid, syscall.SIGINT)
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case err := <-exited:
			signalGroup(pgid, syscall.SIGKILL) // leftovers of the group, if any
			return exitCode(err)
		case <-timer.C:
			log.Info("the program did not stop after SIGINT; sending SIGKILL", "grace", grace)
		case <-abort:
		}
	}
	signalGroup(pgid, syscall.SIGKILL)
	return exitCode(<-exited)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func exitDetail(err error) string {
	if err == nil {
		return "the program exited with status 0"
	}
	return "the program ended: " + err.Error()
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Errorf("%w (is it installed and on PATH?)", ee.Err)
	}
	return err
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// targetInfo describes a local process for the manifest.
func targetInfo(fs interface {
	Cmdline(int) ([]string, error)
	Environ(int) ([]string, error)
}, p procInfo) session.Target {
	t := session.Target{
		PID: p.PID, Name: p.Name, Exe: p.Exe, GoVersion: p.GoVersion, MainModule: p.MainModule, Local: true,
		Started: p.Start.UTC(),
	}
	if p.GoVersion != "" {
		t.GoVersionSource = "buildinfo"
	}
	if args, err := fs.Cmdline(p.PID); err == nil {
		t.Cmdline = args
	}
	if env, err := fs.Environ(p.PID); err == nil {
		t.GODEBUG = getEnv(env, "GODEBUG")
		t.GOGC = getEnv(env, "GOGC")
		t.GOMEMLIMIT = getEnv(env, "GOMEMLIMIT")
		t.GOMAXPROCS, _ = strconv.Atoi(getEnv(env, "GOMAXPROCS"))
	}
	if t.GOMAXPROCS <= 0 {
		// The runtime's default on this machine, which it shares: the CPUs, or fewer under a
		// cgroup CPU limit (Go 1.25+), which this estimate does not see.
		t.GOMAXPROCS = runtime.NumCPU()
	}
	t.Exe = strings.TrimSuffix(t.Exe, " (deleted)")
	return t
}
