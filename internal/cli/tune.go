package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/internal/recorder"
	"github.com/memdoctor/memdoctor/report"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/tune"
)

var tuneCmd = &command{
	name:    "tune",
	args:    "[flags] -- COMMAND [ARGS...]",
	summary: "find GOGC and GOMEMLIMIT by experiment: run a program under the settings the GC model proposes for a budget, measure each, keep the best",
	help: `Tune runs COMMAND as memdoctor run does, first as it is (the baseline), for --duration. It
calibrates memdoctor's model of the GC pacer on that run (the live heap, the allocation rate,
the runtime's other memory) and asks it for the settings that fit the memory budget: GOMEMLIMIT
with GOGC=off, GOMEMLIMIT with the GOGC the gc-overhead advice gives, and GOGC alone, each
sized for a predicted peak RSS of 80% of the budget (settings the model says cut no GC work are
not run). It runs COMMAND under each for --duration and measures GC cycles per second, GC CPU
and its share of mark assists, and the peak RSS (the kernel's high-water mark). It keeps the
setting with the least GC CPU whose measured peak stays within the budget less --margin (GC
CPU within a tenth, or half a point, of the least is a tie, which the lower peak RSS wins),
and shows, for every setting, the model's prediction against the measurement and the error.

Every run is a session of its own under --out (baseline, then one per setting), so memdoctor
compare can read any two. With --load, a load generator runs beside each run: it starts once
the program serves (its pprof endpoint found, or 3s after the Go program appeared), with the
program's PID and pprof URL in MEMDOCTOR_TARGET_PID and MEMDOCTOR_TARGET_PPROF, and is stopped
before the program. The experiment says what it cannot promise about production: another load,
another GOMAXPROCS, other neighbours, a live heap that grows for longer than a run.`,
	examples: []string{
		"memdoctor tune --memory-budget 1GiB --duration 1m -- ./gateway",
		"memdoctor tune --memory-budget 2GiB --load 'hey -z 60s http://localhost:8080/' -- ./server",
		"memdoctor tune --memory-budget 1GiB --duration 20s --json tune.json -- memdoctor lab run gateway-gc",
	},
}

func init() { tuneCmd.run = runTune }

func runTune(ctx context.Context, e *env, args []string) error {
	fs := newFlags(tuneCmd, e)
	var budget sizeFlag
	fs.Var(&budget, "memory-budget", "the memory the service may use, e.g. "+sizeHelp+" (default: memdoctor's cgroup limit, which the program inherits)")
	duration := fs.Duration("duration", 30*time.Second, "how long each run lasts")
	load := fs.String("load", "", "a shell `COMMAND` that drives load at the program during each run (see above)")
	jsonOut := fs.String("json", "", "also write the experiment as JSON to `FILE` (- for stdout; the text then goes to stderr)")
	out := fs.String("out", "", "the `DIR` that holds one session per run (default ./memdoctor-sessions/tune-<name>-<UTC time>)")
	margin := fs.Float64("margin", tune.DefaultMargin*100, "the safety margin, in `PERCENT` of the budget, that a setting's measured peak RSS must stay below")
	grace := fs.Duration("grace", 10*time.Second, "after SIGINT, wait this long for the program to exit before SIGKILL")
	cmdArgs, err := parse(tuneCmd, e, fs, args, false)
	if err != nil {
		return err
	}
	switch {
	case len(cmdArgs) == 0:
		return usagef("tune: no command given: memdoctor tune [flags] -- COMMAND [ARGS...]")
	case *duration < 5*time.Second:
		return usagef("--duration %s: want at least 5s: a GC rate needs cycles to count", *duration)
	case !(*margin > 0 && *margin < 50):
		return usagef("--margin %g: want a percentage between 0 and 50, such as 10", *margin)
	case *grace <= 0:
		return usagef("--grace %s: must be positive", *grace)
	}
	if err := recorder.CanRun(); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if budget.bytes == 0 {
		cg, err := procfs.FS{}.Cgroup(os.Getpid())
		if err != nil || cg.LimitBytes == 0 {
			return usagef("tune: no memory budget: pass --memory-budget SIZE (the memory the service may use; no cgroup memory limit was found)")
		}
		budget.bytes = cg.LimitBytes
	}
	dir := *out
	if dir == "" {
		dir = defaultOut("tune-"+commandName(cmdArgs), time.Now())
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	flags := map[string]string{"tune": "true"}
	fs.Visit(func(fl *flag.Flag) { flags[fl.Name] = fl.Value.String() })
	r := &tuneRunner{e: e, dir: dir, budget: budget.bytes, record: recorder.Run, cfg: recorder.Config{
		Mode: "run", Command: cmdArgs, Duration: *duration, Interval: snapshotEvery(*duration), Sample: time.Second,
		MemoryBudget: budget.bytes, Grace: *grace, Load: *load, Version: version(), Flags: flags,
		Logger: e.log, Stdout: e.stdout, Stderr: e.stderr, LeakCheckEvery: -1,
	}}
	stops, release := handleStops(ctx, e)
	r.cfg.Abort = stops.abort
	res, err := tune.Experiment(stops.ctx, r, tune.Options{Budget: budget.bytes, Margin: *margin / 100})
	release()
	if res != nil {
		if oerr := emitTune(e, res, *jsonOut); oerr != nil && err == nil {
			err = oerr
		}
	}
	if res != nil && res.Baseline.Session != "" {
		fmt.Fprintf(e.stderr, "sessions saved in %s (memdoctor compare %s %s)\n", dir,
			filepath.Join(dir, "baseline"), filepath.Join(dir, chosenName(res)))
	}
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	return nil
}

// emitTune prints the experiment and writes its JSON where asked.
func emitTune(e *env, res *tune.Result, jsonOut string) error {
	text := e.stdout
	if jsonOut == "-" {
		text = e.stderr
	}
	if err := report.TuneText(text, res, report.TextOptions{Color: e.color && jsonOut != "-"}); err != nil {
		return err
	}
	if jsonOut == "" {
		return nil
	}
	return writeOutput(e, "json", jsonOut, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	})
}

// snapshotEvery takes about four rounds of profiles per run, at most every 10s.
func snapshotEvery(d time.Duration) time.Duration {
	return max(time.Second, min(10*time.Second, (d/4).Round(time.Second)))
}

func chosenName(res *tune.Result) string {
	if res != nil && res.Chosen != nil {
		return res.Chosen.Name
	}
	if res != nil && len(res.Candidates) > 0 {
		return res.Candidates[0].Name
	}
	return "CANDIDATE"
}

// tuneRunner runs the program with the recorder, one session per run under dir.
type tuneRunner struct {
	e      *env
	dir    string
	budget uint64
	cfg    recorder.Config
	record func(context.Context, recorder.Config) (recorder.Result, error) // recorder.Run
}

func (r *tuneRunner) Run(ctx context.Context, name string, env map[string]string) (tune.Run, error) {
	cfg := r.cfg
	cfg.Out = filepath.Join(r.dir, name)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cfg.Env = append(cfg.Env, k+"="+env[k])
	}
	r.e.log.Info(fmt.Sprintf("tune: run %s for %s", name, cfg.Duration), "env", cfg.Env)
	res, err := r.record(ctx, cfg)
	if err != nil {
		return tune.Run{}, err
	}
	if res.Status != session.StatusComplete {
		if ctx.Err() != nil {
			return tune.Run{}, ctx.Err()
		}
		return tune.Run{}, errors.New(res.Detail + " before the run's end: it is not comparable with the others")
	}
	d, ev, err := loadInput(r.e, res.Dir, r.budget)
	if err != nil {
		return tune.Run{}, err
	}
	if err := session.WriteDiagnosis(res.Dir, d); err != nil {
		r.e.log.Warn("could not save the diagnosis in the session", "err", err)
	}
	return tune.Run{Session: res.Dir, Ev: ev, D: d}, nil
}
