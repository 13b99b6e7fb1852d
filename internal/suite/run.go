package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Options are what memdoctor test was asked: go test's habits and leaktest's time limit.
type Options struct {
	Dir      string   // where go test would run (a module's directory, or below it)
	Patterns []string // the packages, as go test takes them (default ./...)
	Run      string   // go test's -run, -skip
	Skip     string
	Tags     string // go test's -tags
	Short    bool
	Race     bool
	// Timeout bounds each package's test process, as go test's -timeout (0: none).
	Timeout time.Duration
	// TimeLimit is leaktest's TimeLimit for each test's check.
	TimeLimit time.Duration
	// Parallel is how many packages are checked at once.
	Parallel int
	// Verbose keeps every test's first-run output (go test -v's); without it, only a test not
	// judged keeps its output, so that a large suite's result stays small.
	Verbose bool
	// Env is the environment of the go commands and test processes (os.Environ()).
	Env []string
	// MemdoctorDir, when set, is put first in the test processes' PATH, so that leaktest
	// finds the memdoctor command it runs for who holds a heap leak.
	MemdoctorDir string
	// Progress, when set, is called (from several goroutines) as each test is done.
	Progress func(Progress)
	// PackageDone, when set, is called (from several goroutines) with each package's result
	// and its index in the result, once it is done.
	PackageDone func(index int, p *PackageResult)
}

// Progress is where a package's check stands.
type Progress struct {
	Package     string
	Test        string // the test done, or starting when Done is false
	Done        bool
	Checked     int // its tests done so far
	Total       int
	Leaks       int
	PackageDone bool
}

// A check takes at most three times its time limit for its readings (leaktest's Loop). A run
// of the test still under way runBudgetSlack after that does not return: its test process is
// stopped. The report gets checkBudgetSlack after that (memdoctor holders reading the process
// for a heap leak takes up to two minutes).
const (
	runBudgetSlack   = 10 * time.Second
	checkBudgetSlack = 2*time.Minute + 30*time.Second
)

// Run checks every test of the packages for leaks. Interrupted (ctx), it stops the test
// processes and returns what it found so far with ctx's error. Whatever happens, it leaves
// nothing in the user's tree nor in the temporary directory.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if len(o.Patterns) == 0 {
		o.Patterns = []string{"./..."}
	}
	if o.Parallel < 1 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	tmp, err := os.MkdirTemp("", "memdoctor-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	s := &session{o: o, tmp: tmp}
	res := &Result{}
	if err := s.prepare(ctx, res); err != nil {
		return nil, err
	}
	pkgs, err := listPackages(ctx, o.Dir, s.env, s.buildFlags(), o.Patterns)
	if err != nil {
		return nil, err
	}
	res.Packages = make([]*PackageResult, len(pkgs))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, p := range pkgs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res.Packages[i] = s.checkPackage(ctx, p, i)
			if o.PackageDone != nil {
				o.PackageDone(i, res.Packages[i])
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res, ctx.Err()
}

// session is one Run: its temporary directory and the workspace the tests build in.
type session struct {
	o   Options
	tmp string
	env []string // the go commands'
}

// prepare writes memdoctor's copy of leaktest and the workspace into the temporary directory.
func (s *session) prepare(ctx context.Context, res *Result) error {
	goTmp := filepath.Join(s.tmp, "go")
	if err := os.Mkdir(goTmp, 0o700); err != nil {
		return err
	}
	lt, err := leaktestDir(s.tmp)
	if err != nil {
		return err
	}
	w, err := newWorkspace(ctx, s.o.Dir, goEnv(s.o.Env, "", goTmp))
	if err != nil {
		return err
	}
	work, err := w.write(s.tmp, lt)
	if err != nil {
		return err
	}
	if w.raised != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("the module says go %s: its tests are built in a workspace whose go line is %s, leaktest's least (GODEBUG's defaults are go %s's)", w.raised, w.Go, w.Go))
	}
	s.env = goEnv(s.o.Env, work, goTmp)
	return nil
}

// buildFlags are the go command's flags that change what is built, as go test took them.
func (s *session) buildFlags() []string {
	var f []string
	if s.o.Tags != "" {
		f = append(f, "-tags", s.o.Tags)
	}
	if s.o.Race {
		f = append(f, "-race")
	}
	return f
}

func (s *session) progress(p Progress) {
	if s.o.Progress != nil {
		s.o.Progress(p)
	}
}

// checkPackage builds a package's tests with the harness and checks each test.
func (s *session) checkPackage(ctx context.Context, p *Package, idx int) *PackageResult {
	start := time.Now()
	res := &PackageResult{Package: p.ImportPath, Dir: p.Dir, Status: StatusOK}
	defer func() {
		res.Elapsed = time.Since(start)
		s.progress(Progress{Package: p.ImportPath, Checked: len(res.Tests), Total: len(res.Tests), Leaks: res.leaks(), PackageDone: true})
	}()
	switch {
	case p.Err != "":
		res.Status, res.Error = StatusError, p.Err
		return res
	case len(p.Tests()) == 0:
		res.Status = StatusNoTests
		return res
	case ctx.Err() != nil:
		res.Status = StatusInterrupted
		return res
	}
	dir := filepath.Join(s.tmp, fmt.Sprintf("p%d", idx))
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		res.Status, res.Error = StatusError, err.Error()
		return res
	}
	overlay, err := writeOverlay(p, dir)
	if err != nil {
		res.Status, res.Error = StatusError, err.Error()
		return res
	}
	bin := filepath.Join(dir, "pkg.test")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := append([]string{"test", "-c", "-o", bin, "-overlay", overlay}, s.buildFlags()...)
	if _, err := goCmd(ctx, s.o.Dir, s.env, append(args, p.ImportPath)...); err != nil {
		var ge *GoError
		switch {
		case ctx.Err() != nil:
			res.Status = StatusInterrupted
		case errors.As(err, &ge):
			res.Status, res.Error = StatusBuildFailed, ge.Message
		default:
			res.Status, res.Error = StatusError, err.Error()
		}
		return res
	}
	s.runTests(ctx, p, bin, dir, res)
	return res
}

// runTests runs the package's test process until every test is checked: again for the tests
// left when a test ended the process or ran past its budget.
func (s *session) runTests(ctx context.Context, p *Package, bin, dir string, res *PackageResult) {
	tests := p.Tests()
	byName := map[string]*TestResult{}
	for _, t := range tests {
		tr := &TestResult{Name: t.Name, File: t.File, Line: t.Line}
		byName[t.Name] = tr
		res.Tests = append(res.Tests, tr)
	}
	pr := &procRun{s: s, p: p, bin: bin, dir: dir, byName: byName, total: len(tests)}
	fresh := false // the last process stopped after a leak, as asked
	for attempt := 0; ; attempt++ {
		var left []string
		for _, t := range tests {
			if byName[t.Name].Verdict == "" {
				left = append(left, t.Name)
			}
		}
		if len(left) == 0 || ctx.Err() != nil {
			break
		}
		if attempt > 0 && !fresh {
			res.Restarts++
		}
		only := left
		if attempt == 0 {
			only = nil
		}
		started, f, err := pr.run(ctx, attempt, only)
		fresh = f
		if ctx.Err() != nil {
			break
		}
		if err != nil || !started {
			// No test began: the process cannot run them (TestMain, an init), and would not
			// the next time either.
			why := "its test process ran no test"
			if err != nil {
				why = err.Error()
			}
			res.Status, res.Error = StatusError, why
			for _, n := range left {
				byName[n].Verdict, byName[n].Reason = VerdictNotJudged, "not run: "+firstLine(why)
			}
			break
		}
	}
	// Tests that -run and -skip do not select are not part of the result, as go test says
	// nothing of them.
	kept := res.Tests[:0]
	for _, t := range res.Tests {
		switch {
		case t.Verdict == "" && ctx.Err() != nil:
			t.Verdict, t.Reason = VerdictNotJudged, reasonInterrupted
			res.Status = StatusInterrupted
		case t.Verdict == "":
			continue
		case t.GoVerdict == "not-run":
			continue
		}
		kept = append(kept, t)
	}
	res.Tests = kept
	if res.Status == StatusOK && res.leaks() > 0 {
		res.Status = StatusLeak
	}
}

// reasonInterrupted is the reason of a test the run was interrupted before it checked.
const reasonInterrupted = "interrupted before it was checked"

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
