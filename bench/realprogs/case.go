package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// result is what one case did and how memdoctor's verdict compares with the truth.
type result struct {
	Program string `json:"program"`
	Version string `json:"version"`
	Role    string `json:"role"`
	Expect  string `json:"expect"` // the expected kinds as the table shows them
	// ExpectKinds are the finding kinds that would be right, none for a fixed version.
	ExpectKinds []string `json:"expect_kinds"`
	Culprits    []string `json:"expected_culprits,omitempty"`
	// Skipped says why the case did not run (build, fetch or start failure); nothing else is
	// set then.
	Skipped      string    `json:"skipped,omitempty"`
	BuildSeconds float64   `json:"build_seconds,omitempty"`
	Load         string    `json:"load,omitempty"`
	Found        []finding `json:"found"`
	Verdict      bool      `json:"verdict_right"`
	// CulpritRank is the 1-based rank of the first expected culprit among the expected
	// finding's culprits, 0 when absent.
	CulpritRank int `json:"culprit_rank"`
	// ExpectLine is the line the culprit must be named at (0: any), CulpritLine the line it
	// was named at.
	ExpectLine  int     `json:"expected_line,omitempty"`
	CulpritLine int     `json:"culprit_line,omitempty"`
	Right       bool    `json:"right"`
	Summary     summary `json:"summary"`
	// Before and After are the harness's own readings of the program before the load and
	// after it stopped (a second later): what really happened, whatever memdoctor says.
	Before     reading `json:"before_load"`
	After      reading `json:"after_load"`
	Dir        string  `json:"dir"`
	WatchError string  `json:"watch_error,omitempty"`
	// Prefixes are the case judged on the first 5 s, 10 s, ... of its session, with this
	// repository's rules; PrefixError says why they stop short.
	Prefixes    []prefixVerdict `json:"prefixes,omitempty"`
	PrefixError string          `json:"prefix_error,omitempty"`
	// Holders is how memdoctor holders named the holder of the leaked objects on the live
	// process at the end of the watch (-holders, versions with a holders expectation).
	Holders *holdersVerdict `json:"holders,omitempty"`
	// Watched is how long the watch recorded (its session's length): with -until-confirmed,
	// when it stopped.
	Watched float64 `json:"watched_seconds,omitempty"`
	Seconds float64 `json:"seconds"`
}

// runCase builds, starts, loads and watches one case; it never leaves a process behind.
func runCase(ctx context.Context, o options, b *builder, memdoctor string, c testCase, rep int) result {
	r := result{Program: c.prog.name, Version: c.ver.version, Role: c.ver.role, Expect: c.ver.expect.String(), ExpectKinds: c.ver.expect, Culprits: c.ver.culprits, ExpectLine: c.ver.line}
	start := time.Now()
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	bin, secs, err := b.binary(ctx, c.prog, c.ver)
	r.BuildSeconds = secs
	if err != nil {
		r.Skipped = err.Error()
		return r
	}
	name := c.prog.name + "@" + c.ver.version
	if o.repeat > 1 {
		name += "#" + strconv.Itoa(rep+1)
	}
	r.Dir = filepath.Join(o.sessions, name)
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		r.Skipped = err.Error()
		return r
	}
	work, err := os.MkdirTemp("", "realprogs-work-")
	if err != nil {
		r.Skipped = err.Error()
		return r
	}
	defer os.RemoveAll(work)
	l, err := c.prog.setup(work)
	if err != nil {
		r.Skipped = "setup: " + err.Error()
		return r
	}
	if l.close != nil {
		defer l.close()
	}
	ready := l.pprof
	if o.memory {
		if l.noPprof == nil {
			r.Skipped = "-memory: the program serves its profiling endpoint whatever its configuration"
			return r
		}
		l.args, ready = l.noPprof()
		l.pprof = ""
	}
	l.args = append(l.args[:len(l.args):len(l.args)], c.ver.args...)
	logf, err := os.Create(filepath.Join(r.Dir, "target.log"))
	if err != nil {
		r.Skipped = err.Error()
		return r
	}
	defer logf.Close()
	p, err := startProcess(bin, l.args, l.env, work, logf)
	if err != nil {
		r.Skipped = "start: " + err.Error()
		return r
	}
	defer p.stop(5 * time.Second)
	if err := waitReady(ctx, p, ready, 60*time.Second); err != nil {
		r.Skipped = "start: " + err.Error() + " (see " + logf.Name() + ")"
		return r
	}

	pid := p.cmd.Process.Pid
	r.Before = probe(ctx, l.pprof, pid, false)
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Load = l.load(loadCtx)
	}()
	target := l.pprof
	if o.memory {
		target = strconv.Itoa(pid)
	}
	select { // a service past its start
	case <-ctx.Done():
	case <-time.After(o.attachAfter):
	}
	werr := watch(ctx, o, memdoctor, target, r.Dir)
	if s, err := session.Open(filepath.Join(r.Dir, "session")); err == nil {
		r.Watched = s.Manifest.End.Sub(s.Manifest.Start).Seconds()
	}
	stopLoad()
	wg.Wait()
	if ctx.Err() != nil {
		r.Skipped = fmt.Sprintf("interrupted after %.0fs (session kept in %s)", time.Since(start).Seconds(), r.Dir)
		return r
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Second): // let in-flight requests finish: what stays has leaked
	}
	r.After = probe(ctx, l.pprof, pid, true)
	if werr != nil {
		r.WatchError = werr.Error()
	}
	d, err := readDiagnosis(filepath.Join(r.Dir, "diagnosis.json"))
	// Who holds the leak, read from the process before it is stopped; judged apart from the
	// diagnosis (holders gets the expected site besides the diagnosis' culprits).
	if want, ok := c.prog.holders[c.ver.version]; ok && o.holders {
		r.Holders = runHolders(ctx, memdoctor, r.Dir, pid, d, want)
	}
	if o.keep {
		keepRunning(ctx, o.stdin, o.stderr, name, pid, l.pprof)
	}
	if err != nil {
		if r.WatchError == "" {
			r.WatchError = err.Error()
		}
		return r
	}
	judge(&r, d, c.ver)
	return r
}

// keepRunning leaves the case's program running, loaded as the watch left it, until a line
// is read from in (Enter) or ctx is done: for reading it with other tools, on the same process.
func keepRunning(ctx context.Context, in io.Reader, out io.Writer, name string, pid int, pprof string) {
	fmt.Fprintf(out, "realprogs: %s runs as pid %d (pprof %s): press Enter to stop it\n", name, pid, pprof)
	line := make(chan struct{})
	go func() {
		bufio.NewReader(in).ReadString('\n')
		close(line)
	}()
	select {
	case <-line:
	case <-ctx.Done():
	}
}

// watch runs memdoctor watch on url for o.duration, keeping its session, JSON diagnosis and
// output in dir.
func watch(ctx context.Context, o options, memdoctor, url, dir string) error {
	args := []string{"watch", "--duration", o.duration.String(), "--json", filepath.Join(dir, "diagnosis.json"), "--out", filepath.Join(dir, "session")}
	if o.interval > 0 {
		args = append(args, "--interval", o.interval.String())
	}
	if o.memory {
		args = append(args, "--source", "memory", "--enable-heap-profiling")
	}
	if o.untilConfirmed {
		args = append(args, "--until-confirmed")
	}
	args = append(args, url)
	wctx, cancel := context.WithTimeout(ctx, o.duration+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(wctx, memdoctor, args...)
	out, err := os.Create(filepath.Join(dir, "watch.txt"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	// Interrupted, memdoctor ends its session cleanly on SIGINT, as after Ctrl-C.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("memdoctor %v: %w (see %s)", args, err, out.Name())
	}
	return nil
}

func (r result) line() string {
	if r.Skipped != "" {
		return fmt.Sprintf("%s@%s: skipped: %s", r.Program, r.Version, r.Skipped)
	}
	verdict := "wrong"
	if r.Right {
		verdict = "right"
	}
	return fmt.Sprintf("%s@%s (%s): expected %s, found %s: %s [%s]", r.Program, r.Version, r.Role, r.Expect, foundString(r.Found), verdict, r.Load)
}
