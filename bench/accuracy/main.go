// Command accuracy runs the accuracy matrix: every lab scenario recorded once from every
// vantage point at the same time (memdoctor run, watch on pprof, watch on the agent, the
// profiles alone, and watch by PID from the memory of a build of the scenario that links no
// profiling), judged at several windows against the scenario's expected verdict, with
// the time to verdict of each scenario and vantage point, and precision and recall by finding
// kind. It prints the tables docs/accuracy.md quotes.
//
//	go run ./bench/accuracy                       # every scenario, windows 45s, 60s, 3m
//	go run ./bench/accuracy -windows 60s -scenarios healthy,tcp-reassembly
//	bench/busy -- go run ./bench/accuracy   # on a machine made slow on purpose
//
// Scenarios that need Go 1.27's goroutineleak profile run from a binary built with
// GOTOOLCHAIN=go1.27.0 (fetched through the module proxy); if that build fails they run from
// the Go 1.26 build and the table says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/accuracy"
	"github.com/memdoctor/memdoctor/lab"
)

func main() {
	if err := run(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	windows := fs.String("windows", "45s,60s,3m", "the windows to judge, comma-separated")
	names := fs.String("scenarios", "", "the scenarios to record, comma-separated (default: all)")
	interval := fs.Duration("interval", 10*time.Second, "the profile snapshot interval (memdoctor's default)")
	parallel := fs.Int("parallel", 2, "scenarios recorded at once")
	keep := fs.String("keep", "", "keep the sessions in this directory (default: a temporary one, removed)")
	verbose := fs.Bool("v", false, "show every process's output")
	rejudge := fs.String("rejudge", "", "judge the sessions a run with -keep left in this directory again, without recording")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var wins []time.Duration
	for _, w := range strings.Split(*windows, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(w))
		if err != nil || d <= 0 {
			return fmt.Errorf("-windows %q: want durations like 45s,60s,3m", *windows)
		}
		wins = append(wins, d)
	}
	slices.Sort(wins)
	scenarios := lab.All()
	if *names != "" {
		var pick []lab.Scenario
		for _, n := range strings.Split(*names, ",") {
			sc, ok := lab.Lookup(strings.TrimSpace(n))
			if !ok {
				return fmt.Errorf("-scenarios: no scenario %q (see memdoctor lab list)", n)
			}
			pick = append(pick, sc)
		}
		scenarios = pick
	}
	if *rejudge != "" {
		m := accuracy.JudgeMatrix(filepath.Join(*rejudge, "sessions"), scenarios, wins)
		fmt.Fprintf(stdout, "Accuracy matrix: %d scenarios x %d vantage points x windows %s, judged again from %s.\n",
			len(scenarios), len(accuracy.Vantages), *windows, *rejudge)
		return report(stdout, m)
	}
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "memdoctor-accuracy")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	bins, err := build(dir, stderr)
	if err != nil {
		return err
	}
	log := io.Discard
	if *verbose {
		log = stderr
	}
	cfg := accuracy.Config{Memdoctor: bins.memdoctor, LabGo127: bins.go127, LabNoPprof: bins.noPprof, LabNoPprofGo127: bins.noPprofGo127,
		Duration: wins[len(wins)-1] + 5*time.Second,
		Interval: *interval, Dir: filepath.Join(dir, "sessions"), Log: log}
	start := time.Now()
	m := accuracy.RunMatrix(context.Background(), cfg, scenarios, wins, *parallel, stderr)
	fmt.Fprintf(stdout, "Accuracy matrix: %d scenarios x %d vantage points x windows %s, snapshots every %s; recorded in %s.\n",
		len(scenarios), len(accuracy.Vantages), *windows, *interval, time.Since(start).Round(time.Second))
	if bins.go127 == "" {
		fmt.Fprintf(stdout, "Go 1.27 could not be built: scenarios that need its goroutineleak profile ran on Go 1.26.\n")
	}
	return report(stdout, m)
}

// report prints the matrix and every wrong verdict.
func report(stdout io.Writer, m *accuracy.Matrix) error {
	m.Markdown(stdout)
	if f := m.Failures(); len(f) > 0 {
		fmt.Fprintf(stdout, "\n%d wrong verdict(s):\n", len(f))
		for _, l := range f {
			fmt.Fprintf(stdout, "- %s\n", l)
		}
	}
	return nil
}

type binaries struct{ memdoctor, go127, noPprof, noPprofGo127 string }

// build builds memdoctor, the lab with Go 1.27 for the scenarios that need it
// (internal/dev/labrun, which takes `lab run NAME` as memdoctor does), and the lab without any
// profiling (internal/dev/labrun, -tags nopprof) with each toolchain for the
// watch-memory vantage point.
func build(dir string, stderr io.Writer) (binaries, error) {
	b := binaries{memdoctor: filepath.Join(dir, "memdoctor"), go127: filepath.Join(dir, "labrun-go1.27"),
		noPprof: filepath.Join(dir, "labrun-nopprof"), noPprofGo127: filepath.Join(dir, "labrun-nopprof-go1.27")}
	if out, err := exec.Command("go", "build", "-o", b.memdoctor, "./cmd/memdoctor").CombinedOutput(); err != nil {
		return b, fmt.Errorf("go build ./cmd/memdoctor: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "build", "-tags", "nopprof", "-o", b.noPprof, "./internal/dev/labrun").CombinedOutput(); err != nil {
		return b, fmt.Errorf("go build -tags nopprof ./internal/dev/labrun: %v\n%s", err, out)
	}
	for _, g := range []struct {
		bin *string
		pkg string
		tag []string
	}{{&b.go127, "./internal/dev/labrun", nil}, {&b.noPprofGo127, "./internal/dev/labrun", []string{"-tags", "nopprof"}}} {
		cmd := exec.Command("go", append(append([]string{"build"}, g.tag...), "-o", *g.bin, g.pkg)...)
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(stderr, "accuracy: GOTOOLCHAIN=go1.27.0 go build %s: %v\n%s", g.pkg, err, out)
			*g.bin = ""
		}
	}
	return b, nil
}
