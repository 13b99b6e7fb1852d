package leaktest

import (
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// CheckTest checks a whole test for leaks, as Loop checks a function: it runs test over and
// over, each run a top-level test named name as go test runs it (through testing.RunTests: a
// *testing.T of its own with its subtests, its cleanups and t.Parallel), and judges the live
// heap and the goroutines against the runs with Loop's statistics. It returns the report
// rather than failing t, and writes nothing.
//
// A run that fails, skips or panics ends the check: the report's verdict is then not judged,
// and its Reason says which run and how (a panic is recovered, with its stack, and counts as
// a failed run). What the runs print goes where go test's output goes, os.Stdout.
//
// The test runs as go test -run '^name$' would run it: every subtest; Select narrows them.
// CheckTest refuses what Loop refuses (a parallel t, a Loop or CheckTest running at the same
// time), with t.Fatal, and returns nil then. memdoctor test calls it for every test of a
// package (the leaktest/harness package).
func CheckTest(t testing.TB, name string, test func(*testing.T), opts ...Option) *Report {
	t.Helper()
	if test == nil {
		t.Fatalf("leaktest: CheckTest was given a nil test function")
		return nil
	}
	c := &testCheck{name: name, test: test}
	c.tests = []testing.InternalTest{{Name: name, F: c.run}}
	cfg := defaults()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	runPat, skipPat := "^"+regexp.QuoteMeta(name)+"$", ""
	if cfg.selected {
		runPat, skipPat = cfg.run, cfg.skip
	}
	restore, err := setTestFlags(map[string]string{"test.run": runPat, "test.skip": skipPat, "test.v": "false", "test.count": "1"})
	if err != nil {
		t.Fatalf("leaktest: CheckTest: %v", err)
		return nil
	}
	defer restore()
	pre := func(r *run) {
		r.unit, r.of = "run", name
		r.halt = c.halted
		r.attr.testBoundaries = []string{testBoundary, "testing.tRunner"}
		r.attr.loopCall = funcFrame(test)
		// What the testing package keeps of each run: the name of every subtest it made, in
		// the matcher of the run's own test state, is let go with it; a top-level test's
		// name is kept in a map of running tests until it ends.
		r.cfg.ignoreSites = append(r.cfg.ignoreSites[:len(r.cfg.ignoreSites):len(r.cfg.ignoreSites)], testingKept...)
	}
	return checkWith(t, c.call, pre, opts)
}

// Select sets the patterns of go test's -run and -skip that CheckTest runs a test under, as
// go test takes them (split at unbracketed slashes, the first element matching the test's
// name, the next ones its subtests'): Select("TestX/small", "") runs TestX's subtests whose
// names match "small". By default CheckTest runs the test and every one of its subtests. A
// pattern that does not select the test at all makes its report not judged (and testing warns
// "no tests to run"). Loop ignores it.
func Select(run, skip string) Option {
	return optionFunc(func(c *config) { c.run, c.skip, c.selected = run, skip, true })
}

// testingKept are the testing package's functions whose allocations outlive a run of a test
// by design, which a check of the test leaves out.
var testingKept = []string{"testing.(*matcher).unique", "testing.(*matcher).fullName"}

// testCheck is one CheckTest: the test, its runs, and why they stopped.
type testCheck struct {
	name  string
	test  func(*testing.T)
	tests []testing.InternalTest
	runs  int64
	// Set by the run on the test's goroutine, read after testing.RunTests returned.
	ran, skipped bool
	panicked     string
	halt         atomic.Pointer[string]
}

// call is fn for the run: one run of the test, through testing.RunTests, or nothing once a run
// failed.
func (c *testCheck) call() {
	if c.halted() != "" {
		return
	}
	c.runs++
	c.ran, c.skipped, c.panicked = false, false, ""
	ok := testing.RunTests(matchString, c.tests)
	var why string
	switch {
	case !c.ran:
		why = fmt.Sprintf("%s did not run: the -run and -skip patterns do not select it", c.name)
	case c.panicked != "":
		why = fmt.Sprintf("%s panicked in its run %d under the check: %s", c.name, c.runs, c.panicked)
	case !ok:
		why = fmt.Sprintf("%s failed in its run %d under the check", c.name, c.runs)
	case c.skipped:
		why = fmt.Sprintf("%s skipped in its run %d under the check", c.name, c.runs)
	default:
		return
	}
	c.halt.Store(&why)
}

func (c *testCheck) halted() string {
	if p := c.halt.Load(); p != nil {
		return *p
	}
	return ""
}

// run is the test function testing.RunTests runs: the test itself, its panic recovered. Its
// frame is the boundary of the test's stacks, as the caller's is of fn's.
//
//go:noinline
func (c *testCheck) run(t *testing.T) {
	c.ran = true
	defer func() {
		if p := recover(); p != nil {
			c.panicked = fmt.Sprintf("%v\n%s", p, panicStack(debug.Stack()))
			t.Fail()
		}
		c.skipped = t.Skipped()
	}()
	c.test(t)
}

// maxPanicStack bounds the stack a panic's report keeps.
const maxPanicStack = 8 << 10

// panicStack is the part of a stack debug.Stack took in a deferred recover that tells where
// the panic came from: from the frame that panicked (the runtime's and the recovering
// function's frames left out), bounded.
func panicStack(stack []byte) string {
	s := string(stack)
	if i := strings.Index(s, "\npanic("); i >= 0 {
		if j := strings.Index(s[i+1:], "\n\t"); j >= 0 {
			if k := strings.IndexByte(s[i+1+j+2:], '\n'); k >= 0 {
				s = s[i+1+j+2+k+1:]
			}
		}
	}
	return s[:min(len(s), maxPanicStack)]
}

// testBoundary is the name of the function that runs the test: the boundary of its stacks.
var testBoundary = runtime.FuncForPC(reflect.ValueOf((*testCheck).run).Pointer()).Name()

// funcFrame is where a function is declared.
func funcFrame(fn any) frame {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return frame{fn: "(the test)"}
	}
	file, line := f.FileLine(f.Entry())
	return frame{fn: f.Name(), file: file, line: line}
}

// matchString is testing.RunTests' matcher: Go's regular expressions, compiled once each.
func matchString(pat, s string) (bool, error) {
	patterns.Lock()
	re, ok := patterns.m[pat]
	if !ok {
		var err error
		if re, err = regexp.Compile(pat); err != nil {
			patterns.Unlock()
			return false, err
		}
		if len(patterns.m) >= 64 { // bounded: a few patterns per check
			patterns.m = map[string]*regexp.Regexp{}
		}
		patterns.m[pat] = re
	}
	patterns.Unlock()
	return re.MatchString(s), nil
}

var patterns = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

// setTestFlags sets the testing package's flags for the time of a check, and returns what
// puts them back.
func setTestFlags(values map[string]string) (restore func(), err error) {
	old := map[string]string{}
	restore = func() {
		for name, v := range old {
			flag.Set(name, v)
		}
	}
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			restore()
			return nil, fmt.Errorf("the testing package's -%s flag is not registered: run it in a test", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			restore()
			return nil, fmt.Errorf("-%s %q: %v", name, v, err)
		}
	}
	return restore, nil
}
