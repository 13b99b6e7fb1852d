// Package leaktest catches memory and goroutine leaks in go test, before they ship: it calls a
// function over and over and fails the test when the live heap or the goroutines keep growing
// with the calls, saying what grows by how much per call, the proof, the line that allocates
// it or started the goroutines, and (on Linux, with the memdoctor command on PATH) what keeps
// the memory alive.
//
//	func TestSessionStoreDoesNotLeak(t *testing.T) {
//		s := NewSessionStore(1000)
//		leaktest.Loop(t, func() {
//			s.Handle(newRequest())
//		})
//	}
//
// It is the in-test counterpart of memdoctor's diagnosis (github.com/memdoctor/memdoctor),
// judging the growth with the same statistics, and a module of its own with no dependency
// but the standard library: a module whose tests import it gains this module alone.
//
// # How it judges
//
// Loop calls fn on a goroutine of its own, and keeps TimeLimit on the clock whatever fn does
// or leaves behind: at the limit it stops calling fn after the call under way and judges what
// it has. A call that does not return a grace after the limit (20 times the calls' mean time,
// 1 to 3 s), when the calls before it took a twentieth of that or it is the first, hangs: the
// test fails, saying where the call waits. A panic in fn is raised again on the test's
// goroutine, after the failure says where fn panicked; t.FailNow or t.SkipNow in fn ends the
// test's goroutine too.
//
// Loop first sizes a round as testing.B sizes its loops: it calls fn once, then more times by
// how long the last batch took, until a batch takes 20 ms of the process's CPU, the work the
// calls handed to goroutines included: after each batch (and each round) Loop waits for the
// goroutines the calls started that end on their own to end (settles: the goroutine count has
// stopped falling, and no more goroutines run than before the calls), so that a call that
// returns at once but leaves hundreds of goroutines of work behind is sized by all it costs,
// and the goroutines are counted once those still running have ended. Those calls and one
// more round are the warm-up (Warmup adds calls for caches larger than that). Then it runs
// rounds of that many calls, and after each one collects the garbage (runtime.GC, twice: what
// a sync.Pool holds survives one collection) and reads the live heap (runtime/metrics'
// /gc/heap/live:bytes, what the collection found live) and the number of goroutines, whatever
// their state (running, runnable or blocked). It samples every allocation in the heap profile
// while it runs (runtime.MemProfileRate = 1), and puts the rate back after.
//
// Goroutines that never block (a loop with a zero period on a stop channel never closed) take
// the CPU from everything else, and each garbage collection waits its turn behind them: when
// the calls leave such goroutines (running or ready to run in two dumps while the process ran),
// the rounds add one of them at most, the readings count the goroutines without collecting the
// garbage, and the heap is not judged (the failure or the log says so).
//
// After each round it judges the two series against the number of calls, as memdoctor's
// diagnosis judges a series in time (the statistics are one package, leaktest/trend, that
// both import):
//
//   - the growth counts: at least MinBytesPerCall (or MinGoroutinesPerCall) per call, and at
//     least 64 KiB (4 goroutines) over the rounds;
//   - it is consistent: Kendall's tau of at least 0.5 and Mann-Kendall's one-sided p-value
//     (exact for ten readings or fewer) within a sequential boundary, 0.005 from eight
//     readings on: judged after every round, a series with no trend crosses it at some
//     round at most 3.5% of the time, however many rounds it gets;
//   - it stands clear of the noise: four times the readings' scatter around the Theil-Sen
//     line (or it only ever rose);
//   - it still rises at the end: the slope over the last third of the calls is at least half
//     the whole series', and the second half made at least a quarter of the growth. A cache
//     that fills and stops, a pool, a lazy initialisation or a connection pool that grows to
//     its size is a step at the start or a rise that levels off: not a leak.
//
// A leak is failed as soon as it is confirmed, from the eighth reading on (the baseline's and
// seven rounds': a cache that fills over the first rounds has that long to level off). A
// series with no growth that counts passes after ten readings. A growth that may be a leak but is not yet
// sure (consistent but still small, or levelling off) gets more rounds, up to TimeLimit; a
// suspicion left at the limit is logged, not failed. A run with fewer than eight readings at
// the limit (a loaded machine slows the rounds) goes on until it has eight, up to three times
// the limit, unless its calls left goroutines that never block or a reading was late; one
// with fewer still is "not judged", and says why.
//
// # What a failure says
//
//	leaktest: the live heap keeps growing with the calls of fn: a leak
//	  measured over 4 rounds of 6662 calls after 13425 warm-up calls (652ms)
//
//	live heap: 283 B per call (3.77 MiB -> 11 MiB over 26648 calls); Kendall's tau 1.00, p = 0.0083 (Mann-Kendall), 288 times the readings' scatter, still rising at the end (the last third's slope 0.76 of the whole)
//	  297 B per call (100% of the growth, 1 objects per call) allocated under your code at store/store.go:47
//	    example.com/store.(*Store).remember (/src/store/store.go:47)
//	    100% allocated right there
//
//	who holds it:
//	  example.com/store.(*Store).remember: 7.2 MiB held in this process (26648 sampled objects)
//	    100.0%  7.2 MiB  example.com/store.(*Store).seen[value]
//
// The sites are the heap profile's growth between the first reading and the last, grouped by
// the program's line: the innermost frame of the module under test, the line a person changes,
// as memdoctor's diagnosis names culprits. Under each, the library's line: the innermost
// frame in the module the program called into (or the standard library's allocating line),
// so that a leak inside a dependency names both the call and the dependency's line.
//
// Growing goroutines are grouped by what they wait for, where (the top of their stack), their
// own function and the go statement that started them; goroutines that do not wait are
// grouped by their go statement, as [running]. Each group names its own function, the one its
// go statement starts (a closure's name, "pkg.(*T).Start.func1", with the line where it is
// defined: what a person greps for, and what Go's goroutineleak profile names), and when a
// library's go statement started them, the line of the program that called the library: the
// program's frame under the allocations the go statement's function made during the rounds,
// which the heap profile recorded with their stack (its innermost 32 frames, as
// runtime.MemProfile keeps them).
//
//	goroutines: 25 per call (100 -> 275 over 7 calls); Kendall's tau 1.00, p < 0.0001 (Mann-Kendall), ...
//	  175 more goroutines [chan send] (25 per call), waiting at kv/dist_sender.go:212
//	    example.com/kv.(*DistSender).sendWithLimit.func1 (/src/kv/dist_sender.go:212)
//	    their function, defined at kv/dist_sender.go:212
//	      example.com/kv.(*DistSender).sendWithLimit.func1 (/src/kv/dist_sender.go:212)
//	    started by the go statement at kv/dist_sender.go:212
//	      example.com/kv.(*DistSender).sendWithLimit (/src/kv/dist_sender.go:212)
//
// The verdict, its proof and what the failure names are computed once, when Loop ends, into a
// Report, from which the failure (or the line a passing Loop logs) is written; its JSON form is
// what memdoctor's test command reads.
//
// Who holds it: on Linux, when the memdoctor command is on PATH, a heap leak's failure runs
// `memdoctor holders --json FILE --site FUNC PID` on the test's own process (letting its child
// trace it with prctl(PR_SET_PTRACER)), and shows the reference paths from the GC roots to
// the growth's objects, which the profile sampled all. memdoctor reads DWARF, which plain go
// test leaves out of the binaries it runs: build the test with go test -c (or -o) to get the
// paths. Without memdoctor, the failure says how to get them.
//
// # Whole tests
//
// CheckTest checks a whole test function rather than a function of the program: it runs the
// test over and over, each run a top-level test of its own as go test runs it (through
// testing.RunTests: its *testing.T, its subtests, its cleanups, t.Parallel honoured), judges
// the runs as Loop judges calls, and returns the Report rather than failing the test. A run
// that fails, skips or panics ends the check with no verdict, which the report says. It is
// what memdoctor's test command runs for every test of a package, with no change to the
// package (package leaktest/harness, which memdoctor adds to the package's tests when it
// builds them):
//
//	memdoctor test ./...
//
// # Options
//
// Pass options after fn: Loop(t, fn, leaktest.TimeLimit(30*time.Second),
// leaktest.IgnoreSites("example.com/cache.(*LRU).Add")).
//
//	TimeLimit(d)             the longest Loop runs, on the clock (default 10s)
//	MinBytesPerCall(n)       the smallest heap growth per call that counts (default 1 byte)
//	MinGoroutinesPerCall(n)  the smallest goroutine growth per call that counts (default 0.001)
//	HeapOnly(), GoroutinesOnly()
//	                         check one of the two (default both)
//	Warmup(n)                n more calls before measuring (default 0)
//	IgnoreSites(fn...)       leave memory allocated under these functions out of the growth
//	IgnoreTopFunction(fn...) leave goroutines whose top function is one of these out
//	Select(run, skip)        CheckTest: go test's -run and -skip for the test's subtests
//
// # Limits
//
// The heap and the goroutines are the process's: Loop refuses a parallel test (t.Parallel)
// and a second Loop running at the same time; other goroutines that allocate and keep memory
// while it runs (a background cache warming up) count as fn's. A growth bounded beyond what
// the test reaches (a cache of a million entries filled a thousand calls per round) looks like
// a leak within the time limit: fill it in the warm-up (Warmup). A leak of less than a byte per
// call, or one that appears once in more calls than the rounds make, is out of reach.
//
// fn runs on a goroutine of its own, not the test's: a call still running when Loop returns
// (one that hangs, or is slower than the grace) goes on beside the rest of the test. A
// goroutine that runs on its own for more than five rounds' time of CPU (100 ms) after the
// call that started it counts as one that never blocks: the heap is not judged then.
//
// Where it differs from memdoctor's diagnosis: the readings are against calls, not time; every
// allocation is sampled, so per-site growth is exact rather than estimated; the goroutines'
// maker is found from the process's own heap profile rather than from the callers of a
// library's API in sampled profiles; and the live heap is read after a forced collection, so
// the diagnosis's corrections for a heap measured between collections do not apply.
//
// # Cost
//
// Loop's readings cost one garbage collection per round (20 ms at least); sampling every
// allocation makes each allocation of fn slower (about a microsecond), and each call of fn
// passes through one more function call. See docs/leaktest.md in memdoctor's repository for the
// measured overhead per call and the time to a verdict.
package leaktest
