package leaktest

import (
	"testing"
	"time"
)

// The benchmarks measure what Loop costs: per call of fn against calling fn bare, and the time
// to a verdict. Each b.N is one Loop. go test -run '^$' -bench . -benchtime 5x ./leaktest
// (bench/leaktest/run.sh; figures in docs/leaktest.md).

var sink int

//go:noinline
func cheap() { sink++ }

var garbage []byte

//go:noinline
func allocating() { garbage = make([]byte, 64) }

// bare is the time of one call of fn called in a plain loop, for about 100 ms.
func bare(fn func()) time.Duration {
	n := 0
	start := time.Now()
	for time.Since(start) < 100*time.Millisecond {
		for range 1000 {
			fn()
		}
		n += 1000
	}
	return time.Since(start) / time.Duration(n)
}

// benchLoop runs one Loop per b.N and reports the time per call of fn under Loop, with the
// warm-up and the readings (ns/call) and without (fn-ns/call: the calls alone, under the heap
// profile's sampling of every allocation), called bare (bare-ns/call), the test time to the
// verdict (s/verdict) and to Loop's return, the failure written (s/loop). setup makes each
// Loop's function, and what undoes what it did.
func benchLoop(b *testing.B, setup func() (fn func(), undo func()), wantFail bool, opts ...Option) {
	b.Helper()
	var calls int64
	var elapsed, verdict, inFn time.Duration
	for range b.N {
		fn, undo := setup()
		rec := &recorder{TB: b}
		start := time.Now()
		r := runOnce(rec, fn, append([]Option{noHolders}, opts...)...)
		elapsed += time.Since(start)
		undo()
		calls += r.warmup + r.calls
		inFn += r.inFn
		verdict += r.elapsed
		if failed := len(rec.errors) > 0; failed != wantFail {
			b.Fatalf("Loop failed: %v, want %v: %s", failed, wantFail, rec.failure())
		}
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(calls), "ns/call")
	b.ReportMetric(float64(inFn.Nanoseconds())/float64(calls), "fn-ns/call")
	if !wantFail {
		fn, undo := setup()
		b.ReportMetric(float64(bare(fn).Nanoseconds()), "bare-ns/call")
		undo()
	}
	b.ReportMetric(verdict.Seconds()/float64(b.N), "s/verdict")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/loop")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/verdict")
}

func plain(fn func()) func() (func(), func()) {
	return func() (func(), func()) { return fn, func() {} }
}

// runOnce is Loop, returning its run.
func runOnce(t testing.TB, fn func(), opts ...Option) *run {
	var last *run
	testHookRun = func(r *run) { last = r }
	defer func() { testHookRun = nil }()
	Loop(t, fn, opts...)
	return last
}

// A function that does nothing but count: what Loop adds to each call, and the time to pass.
func BenchmarkCheapFn(b *testing.B) { benchLoop(b, plain(cheap), false) }

// A function that allocates 64 bytes of garbage: every allocation is sampled under Loop.
func BenchmarkAllocatingFn(b *testing.B) { benchLoop(b, plain(allocating), false) }

// The time to a heap leak's verdict: 256 bytes kept per call.
func BenchmarkHeapLeakVerdict(b *testing.B) {
	benchLoop(b, func() (func(), func()) { return leakBytes, func() { leakedBytes = nil } }, true)
}

// The time to a goroutine leak's verdict: one goroutine left blocked per call (let go after
// each Loop, so that each starts with the goroutines the last one found).
func BenchmarkGoroutineLeakVerdict(b *testing.B) {
	benchLoop(b, func() (func(), func()) {
		block := make(chan struct{})
		return func() { go waitOn(block) }, func() { close(block) }
	}, true)
}
