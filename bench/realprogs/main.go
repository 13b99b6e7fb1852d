// Command realprogs runs real upstream Go programs with known, fixed memory bugs under
// `memdoctor watch`: each program before and after its fix, under the load that triggers the
// bug, and prints whether memdoctor's verdict was right. The programs are built through the Go
// module proxy into a cache directory; a program that cannot be built or fetched is skipped
// with a message. See README.md for the programs, their bugs and their fixes.
//
//	go run ./bench/realprogs [flags] [PROGRAM[@VERSION]...]
//	go run ./bench/realprogs -busy 2 -duration 60s coredns nats
//	bench/busy -- go run ./bench/realprogs
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type options struct {
	cache     string
	sessions  string
	duration  time.Duration
	interval  time.Duration
	memdoctor string
	busy      int
	jsonOut   string
	buildOnly bool
	list      bool
	repeat    int
	rejudge   string
	step      time.Duration
	holders   bool
	// memory runs each program without its profiling endpoint and watches it by PID, from its
	// memory (watch --source memory).
	memory bool
	// keep leaves each case's program running after its watch until Enter is read from stdin.
	keep bool
	// untilConfirmed runs watch --until-confirmed (at most -duration); attachAfter starts the
	// watch that long after the load, on a service past its start.
	untilConfirmed bool
	attachAfter    time.Duration
	stdin          io.Reader
	stderr         io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "realprogs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("realprogs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cache, "cache", defaultCache(), "build cache `DIR`: one binary per program, version and toolchain")
	fs.StringVar(&o.sessions, "sessions", "", "keep each case's session, diagnosis and logs under `DIR` (default: a new directory in "+os.TempDir()+")")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long memdoctor watches each case")
	fs.DurationVar(&o.interval, "interval", 0, "memdoctor watch --interval (default: memdoctor's)")
	fs.StringVar(&o.memdoctor, "memdoctor", "", "memdoctor `BINARY` (default: built from this repository)")
	fs.IntVar(&o.busy, "busy", 0, "run `N` busy loops beside the cases, like bench/busy")
	fs.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to `FILE`")
	fs.BoolVar(&o.buildOnly, "build-only", false, "build (or find in the cache) every selected binary, run nothing")
	fs.BoolVar(&o.list, "list", false, "list the programs and versions, run nothing")
	fs.IntVar(&o.repeat, "repeat", 1, "run every case `N` times")
	fs.StringVar(&o.rejudge, "rejudge", "", "run nothing: diagnose the sessions of an earlier run in `DIR` afresh (memdoctor report) and judge them again")
	fs.DurationVar(&o.step, "step", 5*time.Second, "judge each session also on its prefixes of `STEP`, 2*STEP, ... up to -duration (the time to verdict); 0 = not")
	fs.BoolVar(&o.memory, "memory", false, "run each program without its profiling endpoint and watch it by PID, from its memory (memdoctor watch --source memory PID); programs that cannot turn theirs off are skipped")
	fs.BoolVar(&o.untilConfirmed, "until-confirmed", false, "run memdoctor watch --until-confirmed (at most -duration): the session's length is when the watch stopped")
	fs.DurationVar(&o.attachAfter, "attach-after", 0, "start the watch this long after the load, on a service past its start (its warm-up over: see diagnose.WarmUp)")
	fs.BoolVar(&o.keep, "keep", false, "leave each case's program running after its watch (and holders), until Enter: to read it with other tools")
	fs.BoolVar(&o.holders, "holders", false, "at the end of each watch of a version with a heap leak, run memdoctor holders on the live process and judge the path it names against the truth")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./bench/realprogs [flags] [PROGRAM[@VERSION]...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.stdin, o.stderr = os.Stdin, stderr
	if o.repeat < 1 || o.busy < 0 || o.duration <= 0 || o.step < 0 || o.attachAfter < 0 {
		return errors.New("-repeat must be at least 1, -busy, -step and -attach-after at least 0 and -duration positive")
	}
	cases, err := selectCases(catalogue(), fs.Args())
	if err != nil {
		return err
	}
	if o.list {
		printList(stdout, cases)
		return nil
	}
	if o.rejudge != "" {
		return rejudge(ctx, o, stdout)
	}
	b := &builder{cache: o.cache, log: stderr}
	if o.buildOnly {
		for _, c := range cases {
			bin, secs, err := b.binary(ctx, c.prog, c.ver)
			if err != nil {
				fmt.Fprintf(stdout, "%s@%s: skipped: %v\n", c.prog.name, c.ver.version, err)
				continue
			}
			fmt.Fprintf(stdout, "%s@%s: %s (%s)\n", c.prog.name, c.ver.version, bin, buildTime(secs))
		}
		return nil
	}
	return runCases(ctx, o, b, cases, stdout, stderr)
}

func runCases(ctx context.Context, o options, b *builder, cases []testCase, stdout, stderr io.Writer) error {
	md, cleanup, err := memdoctorBinary(ctx, o.memdoctor)
	if err != nil {
		return err
	}
	defer cleanup()
	if o.sessions == "" {
		dir, err := os.MkdirTemp("", "memdoctor-realprogs-"+time.Now().Format("20060102-150405")+"-")
		if err != nil {
			return err
		}
		o.sessions = dir
	}
	if err := os.MkdirAll(o.sessions, 0o755); err != nil {
		return err
	}
	if o.busy > 0 {
		stopBusy, err := startBusy(o.busy)
		if err != nil {
			return err
		}
		defer stopBusy()
	}
	fmt.Fprintf(stderr, "realprogs: %d case(s), %s each; sessions in %s\n", len(cases)*o.repeat, o.duration, o.sessions)
	var results []result
	for i := 0; i < o.repeat; i++ {
		for _, c := range cases {
			if ctx.Err() != nil {
				break
			}
			r := runCase(ctx, o, b, md, c, i)
			addPrefixes(&r, o, c.ver)
			results = append(results, r)
			fmt.Fprintf(stderr, "realprogs: %s\n", r.line())
		}
	}
	printTable(stdout, results)
	fmt.Fprintf(stdout, "\nsessions: %s\n", o.sessions)
	if err := writeJSON(filepath.Join(o.sessions, resultsFile), results); err != nil {
		return err
	}
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, results); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// expectation is what the catalogue expects of r's program and version today (expectations
// get refined), or what r recorded when the catalogue no longer has them.
func expectation(r result) version {
	for _, p := range catalogue() {
		for _, v := range p.versions {
			if p.name == r.Program && v.version == r.Version {
				return v
			}
		}
	}
	return version{version: r.Version, role: r.Role, expect: r.ExpectKinds, culprits: r.Culprits}
}

// resultsFile is where a run leaves its results in its sessions directory, for -rejudge.
const resultsFile = "results.json"

// rejudge diagnoses every session of an earlier run afresh with the memdoctor at hand and
// judges the new diagnoses against the same expectations and ground truth: a quick way to try
// new rules on real programs without running them again.
func rejudge(ctx context.Context, o options, stdout io.Writer) error {
	b, err := os.ReadFile(filepath.Join(o.rejudge, resultsFile))
	if err != nil {
		return fmt.Errorf("-rejudge %s: %w (a sessions directory of an earlier run holds one)", o.rejudge, err)
	}
	var results []result
	if err := json.Unmarshal(b, &results); err != nil {
		return fmt.Errorf("-rejudge %s: %w", o.rejudge, err)
	}
	md, cleanup, err := memdoctorBinary(ctx, o.memdoctor)
	if err != nil {
		return err
	}
	defer cleanup()
	for i := range results {
		r := &results[i]
		if r.Skipped != "" {
			continue
		}
		// The run's directory may have moved: find the case by its name under o.rejudge.
		dir := filepath.Join(o.rejudge, filepath.Base(r.Dir))
		rejudgeHolders(r, dir)
		out := filepath.Join(dir, "rejudged.json")
		cmd := exec.CommandContext(ctx, md, "report", "--json", out, filepath.Join(dir, "session"))
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		if msg, err := cmd.CombinedOutput(); err != nil {
			r.WatchError = fmt.Sprintf("memdoctor report: %v: %s", err, lastLines(string(msg), 3))
			r.Found, r.Summary = nil, summary{}
			continue
		}
		d, err := readDiagnosis(out)
		if err != nil {
			r.WatchError = err.Error()
			continue
		}
		r.WatchError = ""
		v := expectation(*r)
		r.Expect, r.ExpectKinds, r.Culprits = v.expect.String(), v.expect, v.culprits
		judge(r, d, v)
		r.Dir = dir
		addPrefixes(r, o, v)
	}
	printTable(stdout, results)
	if o.jsonOut != "" {
		return writeJSON(o.jsonOut, results)
	}
	return nil
}

// addPrefixes judges the prefixes of r's session (see judgePrefixes) when o asks for it and
// the case ran.
func addPrefixes(r *result, o options, v version) {
	r.Prefixes, r.PrefixError = nil, ""
	if o.step <= 0 || r.Skipped != "" || r.Dir == "" {
		return
	}
	ps, err := judgePrefixes(filepath.Join(r.Dir, "session"), v, o.step, o.duration)
	r.Prefixes = ps
	if err != nil {
		r.PrefixError = err.Error()
	}
}

func writeJSON(path string, results []result) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "memdoctor-realprogs")
}

// selectCases picks the cases named by args (PROGRAM or PROGRAM@VERSION), all when args is
// empty.
func selectCases(progs []*program, args []string) ([]testCase, error) {
	var all []testCase
	for _, p := range progs {
		for _, v := range p.versions {
			all = append(all, testCase{prog: p, ver: v})
		}
	}
	if len(args) == 0 {
		return all, nil
	}
	var out []testCase
	for _, a := range args {
		name, version, _ := strings.Cut(a, "@")
		n := 0
		for _, c := range all {
			if c.prog.name == name && (version == "" || c.ver.version == version) {
				out = append(out, c)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("no program %q: -list shows them", a)
		}
	}
	return out, nil
}

func printList(w io.Writer, cases []testCase) {
	for _, c := range cases {
		fmt.Fprintf(w, "%-22s %-9s %-8s expect %-15s %s\n", c.prog.name, c.ver.version, c.ver.role, c.ver.expect.String(), c.prog.bug)
	}
}
