package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/internal/suite"
)

var testCmd = &command{
	name:    "test",
	args:    "[flags] [PACKAGES]",
	summary: "check every test of a module's packages for leaks, with no change to the code",
	help: `Test checks every test of the packages (as go test takes them; default ./...) for leaks, with
no change to the module: each top-level test is run over and over inside its package's test
process (its TestMain kept), and fails when the goroutines or the live heap grow with the runs,
judged as leaktest.Loop judges a function's calls, with its statistics and its false-alarm
bound. A leak is attributed to the test that made it, never to one that ran after it, and says
what grows per run with the proof, the line of the code under test (and the library's line
under it), the leaked goroutines' wait and the go statement that started them, and who holds
the memory (memdoctor holders on the test process, Linux).

The module need not import leaktest, and nothing in its tree is written: memdoctor builds each
package's tests (one build per package, packages in parallel up to -p) in a workspace of its
own (GOWORK, in a temporary directory) that adds its copy of leaktest, with one more test
file added through go test's -overlay that hands the package's tests to leaktest's harness;
go.mod and go.sum are untouched, and the temporary directory is removed, on Ctrl-C too.

Each test runs once as go test runs it first: a test that fails, skips or panics on its own
is reported with go test's verdict and not judged; then its check runs it as a top-level test
of its own, its subtests included (-run and -skip select them as in go test). A test that
calls t.Parallel is judged alone. A test that fails on a later run (a port still in use, a
registration made twice), ends the process, or runs past its budget (three times
--time-limit, the most leaktest takes for its readings, and time for its report) is not
judged, with the reason; the process is started again for the tests left. A growth not
confirmed within --time-limit is reported as suspected, not failed.

Output: go test's lines per package (--- LEAK, --- NOT JUDGED, --- SUSPECTED, then ok, LEAK or
FAIL with the counts), and on a terminal a live line below them (the package, its tests done
of all, the leaks so far). --junit writes JUnit XML (a testcase per test checked, a failure for
a leak, skipped with the reason for a test not judged, an error for a package that could not
be built), --json memdoctor's JSON (docs/formats.md). Under GitHub Actions (GITHUB_ACTIONS=true)
each leak is also an error annotation on the test's line.

Exit status: 3 when a test leaks, 1 when a package could not be checked (go's own message for
a build failure) and none leaks, 0 otherwise, 2 for a usage error.`,
	examples: []string{
		"memdoctor test ./...",
		"memdoctor test -run 'TestSubscribe|TestPublish' -v ./broker",
		"memdoctor test -short -race --time-limit 20s --junit leaks.xml ./...",
		"memdoctor test --json leaks.json -tags integration ./internal/...",
	},
}

func init() { testCmd.run = runTest }

// errLeakFound is a test that leaks: exit status 3.
var errLeakFound = fmt.Errorf("a test leaks: %w", errFailOn)

func runTest(ctx context.Context, e *env, args []string) error {
	fs := newFlags(testCmd, e)
	var o suite.Options
	fs.StringVar(&o.Run, "run", "", "check only the tests (and subtests) that match the `regexp`, as go test -run")
	fs.StringVar(&o.Skip, "skip", "", "skip the tests (and subtests) that match the `regexp`, as go test -skip")
	fs.StringVar(&o.Tags, "tags", "", "build `tags`, as go test -tags")
	fs.BoolVar(&o.Short, "short", false, "tell long-running tests to shorten their run time, as go test -short")
	fs.BoolVar(&o.Race, "race", false, "build the tests with the race detector, as go test -race")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound each package's test process (its first runs and its checks), as go test -timeout; 0 for none")
	fs.DurationVar(&o.TimeLimit, "time-limit", 10*time.Second, "the longest each test's check runs it (leaktest's TimeLimit): a growth not confirmed by then is suspected, not failed")
	fs.IntVar(&o.Parallel, "p", runtime.GOMAXPROCS(0), "check this many packages at once")
	fs.BoolVar(&o.Verbose, "v", false, "also show each test's first run (as go test -v) and its verdict")
	junit := fs.String("junit", "", "also write the result as JUnit XML to `FILE`")
	jsonOut := fs.String("json", "", "also write the result as JSON to `FILE` (docs/formats.md)")
	pos, err := parse(testCmd, e, fs, args, true)
	if err != nil {
		return err
	}
	switch {
	case o.TimeLimit <= 0:
		return usagef("test: --time-limit %s: want a positive duration", o.TimeLimit)
	case o.Timeout < 0:
		return usagef("test: -timeout %s: want 0 (none) or a positive duration", o.Timeout)
	case o.Parallel < 1:
		return usagef("test: -p %d: want at least 1", o.Parallel)
	}
	for _, p := range pos {
		if strings.HasPrefix(p, "-") {
			return usagef("test: %q: flags go before the packages (memdoctor test [flags] [packages])", p)
		}
	}
	o.Patterns = pos
	if o.Dir, err = os.Getwd(); err != nil {
		return err
	}
	o.Env = os.Environ()
	if exe, err := os.Executable(); err == nil {
		if b := strings.TrimSuffix(filepath.Base(exe), ".exe"); b == "memdoctor" {
			o.MemdoctorDir = filepath.Dir(exe)
		}
	}
	ctx, stop := signal.NotifyContext(ctx, stopSignals...)
	defer stop()
	pw := &packageWriter{w: e.stdout, verbose: o.Verbose}
	if e.term != nil && e.stdoutTerm {
		pw.w = e.term.through(e.stdout) // above the live line, never after it
	}
	st := &testStatus{e: e, running: map[string]suite.Progress{}}
	o.Progress = st.update
	o.PackageDone = pw.done
	res, err := suite.Run(ctx, o)
	st.clear()
	if res == nil {
		if err != nil && ctx.Err() != nil {
			return errors.New("test: interrupted")
		}
		return fmt.Errorf("test: %w", err)
	}
	pw.flush(res)
	suite.WriteSummary(e.stdout, res)
	base := o.Dir
	if ws := e.getenv("GITHUB_WORKSPACE"); ws != "" {
		base = ws
	}
	if e.getenv("GITHUB_ACTIONS") == "true" {
		suite.WriteAnnotations(e.stdout, res, base)
	}
	if *junit != "" {
		if err := writeOutput(e, "junit", *junit, func(w io.Writer) error { return suite.WriteJUnit(w, res, base) }); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		if err := writeOutput(e, "json", *jsonOut, func(w io.Writer) error { return suite.WriteJSON(w, res, base) }); err != nil {
			return err
		}
	}
	c := res.Count()
	switch {
	case c.Leaks > 0:
		return errLeakFound
	case err != nil && ctx.Err() != nil:
		return errors.New("test: interrupted: the tests not checked are said above")
	case c.Failed > 0:
		return fmt.Errorf("test: %d of %d packages could not be checked (said above)", c.Failed, c.Packages)
	}
	return nil
}

// packageWriter writes each package's result once it is done, in the packages' order (as go
// test does), as soon as those before it are written.
type packageWriter struct {
	mu      sync.Mutex
	w       io.Writer
	verbose bool
	ready   map[int]*suite.PackageResult
	next    int
}

// done takes a package's result, and writes it with those after it that are ready, once the
// ones before it are written.
func (pw *packageWriter) done(i int, p *suite.PackageResult) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.ready == nil {
		pw.ready = map[int]*suite.PackageResult{}
	}
	pw.ready[i] = p
	for {
		q, ok := pw.ready[pw.next]
		if !ok {
			return
		}
		delete(pw.ready, pw.next)
		suite.WritePackage(pw.w, q, pw.verbose)
		pw.next++
	}
}

// flush writes the packages not written yet (after an interruption: those never done).
func (pw *packageWriter) flush(res *suite.Result) {
	for i, p := range res.Packages {
		if i >= pw.next && p != nil {
			pw.done(i, p)
		}
	}
}

// testStatus is the live line on a terminal: the packages under way, their tests done of all,
// the leaks so far.
type testStatus struct {
	e        *env
	mu       sync.Mutex
	running  map[string]suite.Progress
	finished int
	leaks    int
}

func (s *testStatus) update(p suite.Progress) {
	if s.e.term == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.PackageDone {
		delete(s.running, p.Package)
		s.finished++
		s.leaks += p.Leaks
	} else {
		s.running[p.Package] = p
	}
	names := make([]string, 0, len(s.running))
	leaks := s.leaks
	for n, r := range s.running {
		names = append(names, n)
		leaks += r.Leaks
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		r := s.running[n]
		parts = append(parts, fmt.Sprintf("%s %d/%d", n, r.Checked, r.Total))
	}
	line := fmt.Sprintf("memdoctor test: %d packages done, %d leaks so far", s.finished, leaks)
	if len(parts) > 0 {
		line += " · " + strings.Join(parts, " · ")
	}
	s.e.term.setStatus(line)
}

func (s *testStatus) clear() {
	if s.e.term != nil {
		s.e.term.setStatus("")
	}
}
