// Package harness is what memdoctor test adds to a package's tests to check each of them for
// leaks: memdoctor builds the package's test binary with one more test file (through go
// test's -overlay, so nothing in the package's directory changes), whose one test calls Run
// with every test function of the package, and runs that test alone. Run runs each test once
// as go test would (its verdict, its output), then checks it with leaktest.CheckTest, and
// writes what it found as JSON lines to the file memdoctor named.
//
// It is not meant to be called by hand: outside memdoctor test, Run skips.
package harness

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/leaktest"
)

// Env is the environment variable memdoctor test passes the Config in, as JSON.
const Env = "MEMDOCTOR_TEST_HARNESS"

// Config is what memdoctor test asks of Run.
type Config struct {
	// Results is the file Run appends its Events to, one JSON line each.
	Results string `json:"results"`
	// Run and Skip are go test's -run and -skip patterns, as the user gave them.
	Run  string `json:"run,omitempty"`
	Skip string `json:"skip,omitempty"`
	// TimeLimit is leaktest's TimeLimit for each test's check.
	TimeLimit time.Duration `json:"time_limit_ns"`
	// Only, when set, are the tests to check (those not checked yet, after a process that
	// ended); by default every test Run is given.
	Only []string `json:"only,omitempty"`
	// FreshAfterLeak makes Run stop after a test that leaks (a "restart" event says so), so
	// that memdoctor checks the tests left in a new process: what a leak leaves behind
	// (goroutines that spin, a heap that grew) would weigh on the next tests' checks.
	FreshAfterLeak bool `json:"fresh_after_leak,omitempty"`
}

// Event is one line of the results file: a test about to run ("start"), its plain run passed
// and its check begins ("check"), the check still going ("alive", every half second), what it
// found ("result"), or Run stopping so that the tests left run in a new process ("restart").
type Event struct {
	Event string `json:"event"`
	Test  string `json:"test"`
	// Plain is the test's first run, as go test runs it (set in "result").
	Plain *Plain `json:"plain,omitempty"`
	// Report is leaktest.CheckTest's, when the plain run passed.
	Report *leaktest.Report `json:"report,omitempty"`
	// Output is what the check's runs printed, its end when it was longer than MaxOutput.
	Output string `json:"output,omitempty"`
	// InRun says, in an "alive" event, whether a run of the test was under way.
	InRun bool `json:"in_run,omitempty"`
	// NotChecked, in a "result" event, says why a test whose first run passed was not
	// checked (its runs too slow for the time limit).
	NotChecked string `json:"not_checked,omitempty"`
}

// minRuns is the fewest runs a check makes: leaktest's warm-up (the first run and a round)
// and its eight readings.
const minRuns = 10

// Plain is a test's first run, as go test -v runs it.
type Plain struct {
	// Verdict is go test's: "pass", "fail", "skip"; "panic" for a panic Run recovered;
	// "not-run" when -run and -skip do not select it.
	Verdict string `json:"verdict"`
	// Parallel is set when the test called t.Parallel.
	Parallel bool `json:"parallel,omitempty"`
	// Panic is the panic's value and stack.
	Panic   string        `json:"panic,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Output is what go test -v printed for it, its end when it was longer than MaxOutput.
	Output string `json:"output,omitempty"`
}

// MaxOutput bounds the output an Event keeps of a run: its last bytes.
const MaxOutput = 32 << 10

// Run checks each test for leaks, as Config (from the environment) asks, and appends an Event
// per test to the results file. t is memdoctor's test, the only one the binary runs.
func Run(t *testing.T, tests []testing.InternalTest) {
	raw, ok := os.LookupEnv(Env)
	if !ok {
		t.Skip("memdoctor test's harness: run by memdoctor test only")
	}
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("memdoctor test's harness: $%s: %v", Env, err)
	}
	out, err := os.OpenFile(cfg.Results, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("memdoctor test's harness: %v", err)
	}
	defer out.Close()
	for _, test := range tests {
		if len(cfg.Only) > 0 && !contains(cfg.Only, test.Name) {
			continue
		}
		if err := write(out, Event{Event: "start", Test: test.Name}); err != nil {
			t.Fatalf("memdoctor test's harness: %v", err)
		}
		ev := check(t, &cfg, test, out)
		if err := write(out, ev); err != nil {
			t.Fatalf("memdoctor test's harness: %v", err)
		}
		if cfg.FreshAfterLeak && ev.Report != nil && ev.Report.Failed() {
			if err := write(out, Event{Event: "restart"}); err != nil {
				t.Fatalf("memdoctor test's harness: %v", err)
			}
			return
		}
	}
}

// check runs a test once as go test -v would, then, when it passed, checks it (saying so
// first with a "check" event).
func check(t *testing.T, cfg *Config, test testing.InternalTest, out *os.File) Event {
	ev := Event{Event: "result", Test: test.Name}
	ev.Plain = plainRun(cfg, test)
	if ev.Plain.Verdict != "pass" {
		return ev
	}
	// A check needs at least minRuns runs within three times its time limit (two for its
	// warm-up, eight readings), and its runs are slower than the first: every allocation is
	// sampled. A test whose first run takes longer than that allows is not checked.
	if most := 3 * cfg.TimeLimit / minRuns; ev.Plain.Elapsed > most {
		ev.NotChecked = fmt.Sprintf("its first run took %s: a check runs a test at least %d times within three times the time limit (%s), so at most %s a run",
			ev.Plain.Elapsed.Round(time.Millisecond), minRuns, 3*cfg.TimeLimit, most.Round(time.Millisecond))
		return ev
	}
	if err := write(out, Event{Event: "check", Test: test.Name, Plain: &Plain{Verdict: ev.Plain.Verdict, Elapsed: ev.Plain.Elapsed}}); err != nil {
		t.Fatalf("memdoctor test's harness: %v", err)
	}
	var inRun atomic.Bool
	f := func(t *testing.T) {
		inRun.Store(true)
		defer inRun.Store(false)
		test.F(t)
	}
	stop := heartbeat(out, test.Name, &inRun)
	capture := captureStdout()
	ev.Report = leaktest.CheckTest(t, test.Name, f, leaktest.TimeLimit(cfg.TimeLimit), leaktest.Select(cfg.Run, cfg.Skip))
	ev.Output = capture.stop()
	stop()
	return ev
}

// heartbeat writes an "alive" event every half second until stopped, saying whether a run of
// the test is under way: memdoctor tells a test stuck in a run (never returning) from a check
// writing its report.
func heartbeat(out *os.File, test string, inRun *atomic.Bool) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				write(out, Event{Event: "alive", Test: test, InRun: inRun.Load()})
			}
		}
	}()
	return func() { close(done); <-finished }
}

// plainRun runs the test once, as go test -v runs it (-run and -skip applied to its subtests),
// its output captured.
func plainRun(cfg *Config, test testing.InternalTest) *Plain {
	p := &Plain{Verdict: "not-run"}
	var ran, skipped bool
	wrapped := []testing.InternalTest{{Name: test.Name, F: func(t *testing.T) {
		ran = true
		defer func() {
			if v := recover(); v != nil {
				p.Panic = fmt.Sprintf("%v\n%s", v, panicked(debug.Stack()))
				t.Fail()
			}
			skipped = t.Skipped()
		}()
		test.F(t)
	}}}
	var old []string
	for _, f := range [][2]string{{"test.run", cfg.Run}, {"test.skip", cfg.Skip}, {"test.v", "true"}, {"test.count", "1"}} {
		old = append(old, f[0], flag.Lookup(f[0]).Value.String())
		flag.Set(f[0], f[1])
	}
	capture := captureStdout()
	start := time.Now()
	ok := testing.RunTests(matchString, wrapped)
	p.Elapsed = time.Since(start)
	p.Output = capture.stop()
	for i := 0; i < len(old); i += 2 {
		flag.Set(old[i], old[i+1])
	}
	p.Parallel = strings.Contains(p.Output, "=== PAUSE "+test.Name+"\n")
	switch {
	case !ran:
	case p.Panic != "":
		p.Verdict = "panic"
	case !ok:
		p.Verdict = "fail"
	case skipped:
		p.Verdict = "skip"
	default:
		p.Verdict = "pass"
	}
	return p
}

// panicked is the frames of a stack taken in a deferred recover from the one that panicked
// on, bounded.
func panicked(stack []byte) string {
	s := string(stack)
	if _, after, ok := strings.Cut(s, "\npanic("); ok {
		if _, after, ok = strings.Cut(after, "\n\t"); ok {
			if _, after, ok = strings.Cut(after, "\n"); ok {
				s = after
			}
		}
	}
	return s[:min(len(s), 8<<10)]
}

// write appends an event to the results file in one write.
func write(f *os.File, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// matchString is testing.RunTests' matcher.
func matchString(pat, s string) (bool, error) { return regexp.MatchString(pat, s) }
