package leaktest

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Loop calls fn on a goroutine of its own, so that a call that never returns ends the test
// at the time limit (and a grace), failing it, saying where the call waits.
func TestHungCallFails(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	var n atomic.Int64
	rec := loop(t, func() {
		if n.Add(1) == 2 {
			<-block // a deadlock on the second call
		}
	}, TimeLimit(time.Second))
	mustFail(t, rec, "a call of fn has not returned", "it hangs", "it waits [chan receive] at leaktest/caller_test.go:",
		"leaktest.TestHungCallFails.func1", "a call that never returns is a deadlock")
}

// A first call that never returns: nothing is judged, and the test fails.
func TestFirstCallHangs(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rec := loop(t, func() { <-block }, TimeLimit(500*time.Millisecond))
	mustFail(t, rec, "the first call of fn has not returned within the time limit (500ms): nothing judged",
		"it waits [chan receive] at leaktest/caller_test.go:")
}

// A call still running a grace after the time limit, in a function whose calls are slow:
// slow rather than hung for sure, it is said, and the readings before it are judged.
func TestSlowCallAtTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a slow call three seconds past the time limit")
	}
	release := make(chan struct{})
	defer close(release)
	var n atomic.Int64
	rec := loop(t, func() {
		d := 200 * time.Millisecond
		if n.Add(1) > 5 {
			d = 10 * time.Second
		}
		select {
		case <-release:
		case <-time.After(d):
		}
	}, TimeLimit(2*time.Second))
	mustPass(t, rec)
	if len(rec.logs) == 0 || !strings.Contains(rec.logs[0], "a call of fn was still running 3s after the time limit") {
		t.Errorf("the pass does not say a call was still running: %q", rec.logs)
	}
}

// A panic in fn is the test's: Loop says where fn panicked and panics with its value on the
// test's goroutine.
func TestPanicInFn(t *testing.T) {
	rec := &recorder{TB: t}
	var got any
	func() {
		defer func() { got = recover() }()
		Loop(rec, func() { panic("boom") }, noHolders)
	}()
	if got != "boom" {
		t.Errorf("Loop's panic: %v, want boom", got)
	}
	if msg := rec.failure(); !strings.Contains(msg, "leaktest: fn panicked: boom") || !strings.Contains(msg, "leaktest/caller_test.go:") {
		t.Errorf("the failure does not say where fn panicked: %q", msg)
	}
	mustPass(t, loop(t, func() {})) // the next Loop runs
}

// runtime.Goexit in fn (t.FailNow, t.SkipNow) ends the test's goroutine, as it would have had
// fn run on it.
func TestGoexitInFn(t *testing.T) {
	rec := &recorder{TB: t}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		Loop(rec, func() { runtime.Goexit() }, noHolders)
		returned = true
	}()
	<-done
	if returned {
		t.Error("Loop returned after fn called runtime.Goexit")
	}
}
