package leaktest

import (
	"fmt"
	"strings"
	"testing"
	"time"
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

// noHolders keeps memdoctor holders out of leaktest's own tests.
var noHolders = optionFunc(func(c *config) { c.holders = false })

// loop runs Loop on a recorder and returns it, with how long it took.
func loop(t *testing.T, fn func(), opts ...Option) (*recorder, time.Duration) {
	t.Helper()
	rec := &recorder{TB: t}
	start := time.Now()
	Loop(rec, fn, append([]Option{noHolders}, opts...)...)
	d := time.Since(start)
	for _, l := range rec.logs {
		t.Log(l)
	}
	return rec, d
}

var leakedBytes [][]byte

//go:noinline
func leakBytes() { leakedBytes = append(leakedBytes, make([]byte, 256)) }

func TestHeapLeakFails(t *testing.T) {
	defer func() { leakedBytes = nil }()
	rec, d := loop(t, leakBytes)
	t.Logf("took %s:\n%s", d, rec.failure())
	if len(rec.errors) == 0 {
		t.Fatal("a function keeping 256 bytes per call passed")
	}
	msg := rec.failure()
	for _, want := range []string{"the live heap keeps growing", "per call", "leakBytes", "loop_test.go:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not say %q:\n%s", want, msg)
		}
	}
}

var cache = map[int][]byte{}

func TestBoundedPasses(t *testing.T) {
	i := 0
	rec, d := loop(t, func() {
		cache[i%1000] = make([]byte, 64)
		i++
	})
	t.Logf("took %s", d)
	if len(rec.errors) > 0 {
		t.Fatalf("a bounded map failed:\n%s", rec.failure())
	}
}

func TestGoroutineLeakFails(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rec, d := loop(t, func() { go func() { <-block }() })
	t.Logf("took %s:\n%s", d, rec.failure())
	if len(rec.errors) == 0 {
		t.Fatal("a function leaving a goroutine per call passed")
	}
}
