package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

var runCmd = &command{
	name:    "run",
	args:    "[flags] -- COMMAND [ARGS...]",
	summary: "run a Go program, record a session while it runs, and diagnose it",
	help: `Run starts COMMAND with gctrace=1 added to its GODEBUG (keeping the rest of GODEBUG), passes
its own stdout and stderr through, captures its gctrace lines, and follows its process tree,
so that "memdoctor run -- go run ./cmd/server" measures the server, not the go command. It
samples the target's /proc and cgroup every --sample and, when the target serves
net/http/pprof (found on the ports it listens on, or given with --pprof), takes heap and
goroutine profiles every --interval, reads the counts of the pprof index page every
--sample, and fetches the goroutineleak profile when served (see --leak-check-every; each
fetch runs one GC cycle in the program). A program that serves no pprof endpoint (none found
within 5s) is read from its memory instead, without stopping it: its heap profile, memory
statistics, GC figures and goroutine count (see memdoctor watch PID); a program that links no
profiling samples no allocations unless --enable-heap-profiling lets memdoctor turn its heap
profiling on. When the target's memory comes within 10% of its
cgroup limit or --memory-budget and rises, it takes heap and goroutine profiles at once,
outside the interval (labelled before-oom; at most one a second, and one per 1% of the limit
climbed): when the OOM killer ends the program, the session holds the heap from its last
seconds, and the diagnosis says so (oom-risk, critical) with what that profile held most.
When --duration ends, or on Ctrl-C (or SIGTERM, or
SIGHUP) it stops the program (SIGINT to its process group, then SIGKILL after --grace),
closes the session and prints the diagnosis. Before it stops the program, when the session so
far confirms a heap leak, it reads who holds the leak's culprits' objects from the program's
heap, as memdoctor holders does (the program is stopped with ptrace while its heap is read,
and memdoctor says for how long): the heap-leak finding then shows, under each culprit, the
reference paths that keep its objects alive; --holders=false turns that off. A second Ctrl-C kills the program's process
group at once and exits without the diagnosis; the session is closed either way. If the
program exits by itself, the session ends there (its heap can no longer be read: the finding
says so). Should memdoctor itself be killed (SIGKILL,
the OOM killer), the kernel kills the program it started; not the processes that program
started in turn (the server "go run" builds): run a built binary to be sure.`,
	examples: []string{
		"memdoctor run --duration 2m -- ./server --port 8080",
		"memdoctor run --memory-budget 2GiB --json diag.json -- go run ./cmd/server",
		"GODEBUG=madvdontneed=0 memdoctor run --interval 5s -- ./batch",
		"memdoctor run --enable-heap-profiling --duration 5m -- ./server-without-pprof",
		"memdoctor run --holders=false --duration 2m -- ./server   # never stop it to read its heap",
	},
}

func init() { runCmd.run = runRun }

func runRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(runCmd, e)
	var cf collectFlags
	cf.register(fs, true)
	grace := fs.Duration("grace", 10*time.Second, "after SIGINT, wait this long for the program to exit before SIGKILL")
	showTrace := fs.Bool("show-gctrace", false, "also show the program's gctrace lines (they are always kept in the session)")
	enableHeap := fs.Bool("enable-heap-profiling", false, enableHeapHelp)
	holdersOn := fs.Bool("holders", true, holdersHelp)
	cf.output.stop.register(fs, "--holders")
	cmdArgs, err := parse(runCmd, e, fs, args, false)
	if err != nil {
		return err
	}
	if len(cmdArgs) == 0 {
		return usagef("run: no command given: memdoctor run [flags] -- COMMAND [ARGS...]")
	}
	if err := cf.check(); err != nil {
		return err
	}
	if *grace <= 0 {
		return usagef("--grace %s: must be positive (how long the program may take to exit after SIGINT)", *grace)
	}
	if err := recorder.CanRun(); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	cfg := cf.config(e, "run", commandName(cmdArgs), fs)
	cfg.Command = cmdArgs
	cfg.Grace = *grace
	cfg.ShowGCTrace = *showTrace
	cfg.EnableHeapProfiling = *enableHeap
	cfg.Holders = holdersAtEnd(e, cfg.Out, cfg.MemoryBudget, *holdersOn, cf.output.stop)
	return record(ctx, e, cfg, cf.output, func(ctx context.Context, abort <-chan struct{}) (recorder.Result, error) {
		cfg.Abort = abort
		return recorder.Run(ctx, cfg)
	})
}

// commandName names a session after the program it runs ("go run ./cmd/server" -> "server").
func commandName(args []string) string {
	name := filepath.Base(args[0])
	if name == "go" && len(args) > 2 && args[1] == "run" {
		last := args[2]
		for _, a := range args[2:] {
			if len(a) > 0 && a[0] != '-' {
				last = a
				break
			}
		}
		name = filepath.Base(last)
	}
	return name
}

// errAborted reports a recording stopped at once by a second stop signal.
var errAborted = errors.New("stopped at once by a second signal: the program was killed")

// record runs a recording until it ends or a stop signal comes (Ctrl-C, SIGTERM, SIGHUP),
// then diagnoses the session. A second signal kills the program at once and ends without a
// diagnosis; the session is closed either way. rec gets the abort channel for
// recorder.Config.Abort.
func record(ctx context.Context, e *env, cfg recorder.Config, out outputFlags, rec func(context.Context, <-chan struct{}) (recorder.Result, error)) error {
	stops, release := handleStops(ctx, e)
	e.log.Info("recording a session", "dir", cfg.Out)
	res, err := rec(stops.ctx, stops.abort)
	release() // from here on, a signal has its default action: the session is closed
	if e.term != nil {
		e.term.setStatus("")
	}
	select {
	case <-stops.abort:
		if err == nil {
			err = errAborted
		}
		return fmt.Errorf("%w (the session is in %s: memdoctor analyze %s)", err, cfg.Out, cfg.Out)
	default:
	}
	if err != nil {
		if res.Dir != "" || errors.Is(err, recorder.ErrNotGo) {
			return fmt.Errorf("%w (the session so far is in %s)", err, cfg.Out)
		}
		return err
	}
	e.log.Info("the session ended: "+res.Detail, "status", res.Status)
	_, derr := diagnoseDir(e, res.Dir, cfg.MemoryBudget, out)
	fmt.Fprintf(e.stderr, "session saved in %s (memdoctor analyze %s)\n", res.Dir, res.Dir)
	return derr
}
