package leaktest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps what Loop reports instead of failing the test, so that
// a test can check that a leak fails and what the failure says.
type recorder struct {
	testing.TB
	errors, logs []string
	fatal        bool
}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.fatal = true; r.Error(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }
func (r *recorder) Log(args ...any)                   { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recorder) Logf(format string, args ...any)   { r.Log(fmt.Sprintf(format, args...)) }

func (r *recorder) failure() string { return strings.Join(r.errors, "\n") }

// noHolders keeps memdoctor holders out of leaktest's own tests (internal/dev/leaktestproof runs
// it for real).
var noHolders = optionFunc(func(c *config) { c.holders = false })

// shortRounds makes rounds of 5 ms under -short.
var shortRounds = optionFunc(func(c *config) {
	if testing.Short() {
		c.roundTime = defaultRoundTime / 4
	}
})

// loop runs Loop on a recorder and returns it.
func loop(t *testing.T, fn func(), opts ...Option) *recorder {
	t.Helper()
	rec := &recorder{TB: t}
	Loop(rec, fn, append([]Option{noHolders, shortRounds}, opts...)...)
	for _, l := range rec.logs {
		t.Log(l)
	}
	return rec
}

// mustFail checks that Loop failed and that its failure says each of want.
func mustFail(t *testing.T, rec *recorder, want ...string) string {
	t.Helper()
	msg := rec.failure()
	if len(rec.errors) == 0 {
		t.Fatal("Loop passed a leak")
	}
	t.Logf("the failure:\n%s", msg)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the failure does not say %q", w)
		}
	}
	return msg
}

func mustPass(t *testing.T, rec *recorder) {
	t.Helper()
	if len(rec.errors) > 0 {
		t.Fatalf("Loop failed a function that does not leak:\n%s", rec.failure())
	}
}

var leakedBytes [][]byte

//go:noinline
func leakBytes() { leakedBytes = append(leakedBytes, make([]byte, 256)) }

// A function that keeps 256 bytes per call fails, naming its line.
func TestHeapLeakFails(t *testing.T) {
	defer func() { leakedBytes = nil }()
	rec := loop(t, leakBytes)
	mustFail(t, rec, "the live heap keeps growing", "B per call", "allocated under your code at leaktest/loop_test.go:",
		"leaktest.leakBytes", "Kendall's tau", "Mann-Kendall", "still rising")
}

type registry struct {
	mu   sync.Mutex
	subs map[int]*subscriber
	next int
}

type subscriber struct {
	ch  chan string
	buf []byte
}

// subscribe registers a subscriber that nobody ever removes: the kind of leak a test of a
// request handler catches.
func (r *registry) subscribe() *subscriber {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &subscriber{ch: make(chan string, 4), buf: make([]byte, 512)}
	r.subs[r.next] = s
	r.next++
	return s
}

// The growth is named at the line that allocates it, under the closure that calls it.
func TestHeapLeakNamesTheLine(t *testing.T) {
	reg := &registry{subs: map[int]*subscriber{}}
	mustFail(t, loop(t, func() { reg.subscribe() }), "leaktest.(*registry).subscribe",
		fmt.Sprintf("allocated under your code at leaktest/loop_test.go:%d", lineOf(t, "s := &subscriber{")))
}

// A goroutine left blocked per call fails, naming where it waits and the go statement.
func TestGoroutineLeakFails(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	mustFail(t, loop(t, func() { go waitOn(block) }),
		"goroutines and the live heap keep growing", "more goroutines [chan receive]", "waiting at leaktest/loop_test.go:", "leaktest.waitOn",
		"started by the go statement at leaktest/loop_test.go:")
}

//go:noinline
func waitOn(c chan struct{}) { <-c }

// GoroutinesOnly leaves the heap alone: a heap leak passes.
func TestGoroutinesOnly(t *testing.T) {
	defer func() { leakedBytes = nil }()
	mustPass(t, loop(t, leakBytes, GoroutinesOnly()))
}

// HeapOnly leaves the goroutines' count alone: a goroutine leak is still a heap leak (what
// each goroutine holds, and its record when no ended goroutine's can be reused), and said so.
func TestHeapOnly(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	msg := mustFail(t, loop(t, func() { go waitOn(block) }, HeapOnly()), "the live heap keeps growing", "on another goroutine, under your code at leaktest/loop_test.go:")
	if strings.Contains(msg, "goroutines and") {
		t.Error("HeapOnly judged the goroutines")
	}
}

// MinBytesPerCall raises what counts.
func TestMinBytesPerCall(t *testing.T) {
	defer func() { leakedBytes = nil }()
	mustPass(t, loop(t, leakBytes, MinBytesPerCall(4096)))
}

var ignoredLeak [][]byte

//go:noinline
func knownGrowth() { ignoredLeak = append(ignoredLeak, make([]byte, 128)) }

// IgnoreSites leaves a known growth out.
func TestIgnoreSites(t *testing.T) {
	defer func() { ignoredLeak = nil }()
	mustPass(t, loop(t, knownGrowth, IgnoreSites("github.com/memdoctor/memdoctor/leaktest.knownGrowth"), GoroutinesOnly(), HeapOnly()))
}

// IgnoreTopFunction leaves goroutines out of the count by their top function.
func TestIgnoreTopFunction(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	mustPass(t, loop(t, func() { go waitOn(block) }, GoroutinesOnly(), IgnoreTopFunction("github.com/memdoctor/memdoctor/leaktest.waitOn")))
}

// Loop refuses a parallel test, saying why.
func TestParallelRefused(t *testing.T) {
	t.Run("parallel", func(t *testing.T) {
		t.Parallel()
		called := false
		rec := &recorder{TB: t}
		Loop(rec, func() { called = true })
		if !rec.fatal || !strings.Contains(rec.failure(), "is a parallel test (t.Parallel)") || !strings.Contains(rec.failure(), "heap and goroutines") {
			t.Errorf("Loop in a parallel test: %q", rec.failure())
		}
		if called {
			t.Error("Loop called fn in a parallel test")
		}
	})
}

// Options that make no sense are refused in one line.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{TimeLimit(0), "TimeLimit(0s)"},
		{MinBytesPerCall(-1), "MinBytesPerCall(-1)"},
		{MinGoroutinesPerCall(-1), "MinGoroutinesPerCall(-1)"},
		{Warmup(-1), "Warmup(-1)"},
	} {
		rec := &recorder{TB: t}
		Loop(rec, func() {}, tc.opt)
		if !rec.fatal || !strings.Contains(rec.failure(), tc.want) || strings.Contains(rec.failure(), "\n") {
			t.Errorf("Loop with %s: %q", tc.want, rec.failure())
		}
	}
	rec := &recorder{TB: t}
	Loop(rec, nil)
	if !rec.fatal || !strings.Contains(rec.failure(), "nil function") {
		t.Errorf("Loop with a nil function: %q", rec.failure())
	}
}

// Only one Loop runs at a time.
func TestNestedLoopRefused(t *testing.T) {
	var inner *recorder
	mustPass(t, loop(t, func() {
		if inner == nil {
			inner = &recorder{TB: t}
			Loop(inner, func() {})
		}
	}))
	if inner == nil || !inner.fatal || !strings.Contains(inner.failure(), "another Loop is running") {
		t.Errorf("a Loop inside a Loop: %v", inner)
	}
}

// lineOf is the line of loop_test.go that holds text.
func lineOf(t *testing.T, text string) int {
	t.Helper()
	return lineIn(t, "loop_test.go", text)
}

// lineIn is the line of a file of this package that holds text.
func lineIn(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) && !strings.Contains(l, "lineOf") {
			return i + 1
		}
	}
	t.Fatalf("no line of %s holds %q", file, text)
	return 0
}
