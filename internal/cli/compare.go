package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/compare"
	"github.com/memdoctor/memdoctor/report"
)

var compareCmd = &command{
	name:    "compare",
	args:    "[flags] OLD NEW",
	summary: "prove a fix: compare two sessions metric by metric, with a significance test, their findings and their heaps",
	help: `Compare reads two sessions, OLD (before a change) and NEW (after), and says what changed
(either may also be anything analyze reads: a folder of profiles, profiles, gctrace logs):
GC cycles per second, GC CPU and its share of mark assists, the allocation rate, the live-heap
floor, the peak RSS (the kernel's high-water mark) and the goroutines, each with OLD's and NEW's
figures (the same as each session's report), the change, and whether it is significant; the
findings resolved, new and persisting; and the heap in use at each session's end, diffed by
function of the program's own code.

Significance is judged as benchstat judges benchmarks: each session is cut into equal
intervals (--interval, longer where a quantity is read less often, and for the GC's figures
long enough for 4 GC cycles) and the values of the intervals are compared with a two-sided
Mann-Whitney U test, exact up to 50 intervals. A change is significant when p < --alpha and
the medians differ by at least --min-change and by at least the metric's resolution
(1 MiB, 5 goroutines, 1 point of CPU, ...): two runs of one program differ by a few percent by
chance, and the test would call that real. When the sessions are too short for any result to
reach --alpha (4 intervals a side at least), the table says "too little data" and how much is
needed, rather than "no change". The two sessions may differ in length; intervals in which the
process restarted are left out. Sessions recorded by run start with the program's start-up:
--skip leaves it out.`,
	examples: []string{
		"memdoctor compare memdoctor-sessions/server-before memdoctor-sessions/server-after",
		"memdoctor compare --skip 30s --html compare.html ./before ./after",
		"memdoctor compare --fail-on-regression --json compare.json ./baseline ./candidate",
	},
}

func init() { compareCmd.run = runCompare }

func runCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(compareCmd, e)
	jsonOut := fs.String("json", "", "also write the comparison as JSON to `FILE` (- for stdout; the text then goes to stderr)")
	htmlOut := fs.String("html", "", "also write the comparison as one self-contained HTML page to `FILE`: both sessions' charts on one time axis, the table, the findings that changed")
	failReg := fs.Bool("fail-on-regression", false, "exit with status 3 when a metric is significantly worse in NEW, or NEW has a finding at warning or above that OLD had not")
	interval := fs.Duration("interval", compare.DefaultInterval, "the shortest `LENGTH` of the intervals each session is cut into")
	skip := fs.Duration("skip", 0, "leave out the first `DURATION` of each session (start-up, warm-up)")
	alpha := fs.Float64("alpha", compare.DefaultAlpha, "the significance `LEVEL` of the test")
	minChange := fs.Float64("min-change", compare.DefaultMinChange*100, "the smallest change, in `PERCENT` of OLD's median, that counts as one (0 = any)")
	pos, err := parse(compareCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 2:
		return usagef("compare: want OLD and NEW: two sessions, folders of profiles or profiles (see memdoctor compare -h)")
	case *interval < 100*time.Millisecond:
		return usagef("--interval %s: must be at least 100ms", *interval)
	case *skip < 0:
		return usagef("--skip %s: must not be negative", *skip)
	case !(*alpha > 0 && *alpha < 1):
		return usagef("--alpha %g: want a level between 0 and 1, such as 0.05", *alpha)
	case !(*minChange >= 0 && *minChange < 1000):
		return usagef("--min-change %g: want a percentage, such as 10 (0 = any change)", *minChange)
	}
	var sides [2]compare.Side
	for i, arg := range pos {
		which := [2]string{"OLD", "NEW"}[i]
		d, ev, err := loadInput(e, arg, 0)
		if err != nil {
			return fmt.Errorf("compare %s %s: %w", which, arg, err)
		}
		sides[i] = compare.Side{Name: arg, Ev: ev, D: d}
	}
	opts := compare.Options{Interval: *interval, Skip: *skip, Alpha: *alpha, MinChange: *minChange / 100}
	if *minChange == 0 {
		opts.MinChange = -1
	}
	res := compare.Compare(sides[0], sides[1], opts)
	text := e.stdout
	if *jsonOut == "-" {
		text = e.stderr
	}
	if err := report.CompareText(text, res, report.TextOptions{Color: e.color && *jsonOut != "-"}); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := writeOutput(e, "json", *jsonOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}); err != nil {
			return err
		}
	}
	if *htmlOut != "" {
		in := report.CompareInput{Result: res, Old: sides[0].Ev, New: sides[1].Ev, OldD: sides[0].D, NewD: sides[1].D}
		if err := writeOutput(e, "html", *htmlOut, func(w io.Writer) error {
			return report.CompareHTML(w, in, htmlOptions(e))
		}); err != nil {
			return err
		}
	}
	if *failReg && res.Regression {
		fmt.Fprintf(e.stderr, "memdoctor: compare: NEW regressed: %s\n", regressions(res))
		return errFailOn
	}
	return nil
}

// regressions names what got worse, for the one line --fail-on-regression prints.
func regressions(r *compare.Result) string {
	var out []string
	for _, m := range r.Metrics {
		if m.Regression {
			out = append(out, fmt.Sprintf("%s (p=%.3g)", m.Name, *m.PValue))
		}
	}
	for _, f := range r.Findings.New {
		out = append(out, fmt.Sprintf("new %s %s finding", f.New.Severity, f.Kind))
	}
	return strings.Join(out, ", ")
}
