// Package sim writes memdoctor sessions of simulated Go services whose truth is known, so that
// the diagnosis can be scored on many more programs, shapes and vantage points than the lab
// can run.
//
// Generate draws a service from a seed and a Spec (a shape, a vantage point, a window),
// simulates its memory second by second and writes the session directory that one vantage
// point would have recorded, with session.Writer, as memdoctor's collectors do. It returns
// the Truth: the finding kinds that must be reported at warning or above, the culprit
// function of each, the kinds that must not be reported, and the kinds the vantage point
// cannot see at all.
//
// # What it models
//
//   - The pacer (runtime-memory-facts.md section 3): goal = live + (live + stacks + globals)
//     x GOGC/100 with a 4 MiB x GOGC/100 floor, and the smaller memory-limit goal when
//     GOMEMLIMIT is set (no shape draws a limit yet); a cycle starts when the heap reaches the trigger, between 45/64 and
//     61/64 of the way from live to goal; objects allocated while marking are marked live;
//     the idle program gets a GC every 2 minutes.
//   - GC CPU: marking costs (live + stacks + globals) / mark rate, split into background,
//     assist and idle work; two short pauses per cycle; the gctrace "%" counts all but idle
//     marking over GOMAXPROCS x wall time.
//   - The heap's pages: in use (objects plus fragmentation), free and retained, released;
//     freed pages stay retained until the scavenger returns them, which it does only down to
//     1.1 x (goal/last goal) x the heap in use sampled before sweeping, so a freed spike goes
//     back after the second GC; debug.FreeOSMemory returns everything within a second or so
//     (a reading in between sees the freed batch as free heap); under MADV_FREE
//     (GODEBUG=madvdontneed=0) released pages stay resident as LazyFree.
//   - RSS = heap in use + free retained + LazyFree + stacks + runtime metadata and other +
//     memory outside Go (cgo, mmap) + the binary's file pages; VmHWM its peak.
//   - Shapes: a healthy steady state with noise; heap leaks from 1 to 100 MiB/min; periodic
//     spikes (period, height, how long the data lives); a leak under spikes; caches that warm
//     up and plateau; goroutine leaks; GC pressure (high allocation on a small heap, GOGC 25
//     to 400); memory the runtime retains after batch jobs freed with debug.FreeOSMemory under
//     MADV_FREE (once or periodically); memory outside Go; a library's goroutines that pile up
//     for the program's calls; leaks at busy sites, leaks that make the GC rare, a cost per
//     request that climbs; a leak kept a little at each of several sites that one function of
//     the program shares (a session middleware); a slow leak under exports built over seconds,
//     inside which the GC runs; and the steady leaks a watch must confirm within seconds: a
//     library keeping 30 to 60 MiB a minute, 15 to 25 of a library's goroutines a second.
//     Windows of any length, starting at any phase, some ending in the middle of a spike.
//   - Vantage points, as the recorder writes them: run (gctrace lines of every cycle, /proc
//     every second, heap and goroutine profiles and the MemStats block every 10 s), watch on
//     pprof (/proc every second, MemStats and profiles every 10 s), watch on the agent
//     (runtime/metrics and /proc in one sample a second, the agent's profiles every 10 or
//     15 s, its history from before the attach), and profiles alone; the profile interval can
//     be set (Spec.Interval: watch --interval 5s).
//   - The watch study (WatchLooks, TestSimWatch): a session diagnosed on its first 5 s, 10 s,
//     ... as watch --until-confirmed diagnoses what it recorded so far; every look counts, so
//     a false warning at any of them is a false alarm.
//   - Heap profiles are real pprof protos with the four sample types and realistic stacks
//     (the program's own functions under a few standard library frames), sampled at
//     MemProfileRate as the runtime samples (Poisson draws, scaled back), as of the last
//     completed GC. Goroutine profiles hold a few steady groups and the leaking one. A library's leaked
//     goroutines (an HTTP client's connections, a subscription's workers, a *sql.DB opened per
//     request) come with the program's call that made them at a line of its own, beside its
//     other calls into the library (a query whose connection the leak holds, more than the
//     constructor's own); half of those services' goroutine profiles record which function
//     started them, as memdoctor's reads of a process's memory do, and the truth names the
//     maker's line.
//
// # What it does not model
//
// Timing inside a GC cycle beyond the mark phase's length, sweeping, size classes and span
// fragmentation dynamics (a fixed fraction), the GC CPU limiter, the memory limit's effect on
// the scavenger, transparent huge pages, cgroup memory, the pprof index page's goroutine
// count, the goroutineleak profile, execution traces, and the agent's event-triggered
// profile pairs. Its numbers are plausible, not measured: it is a generator of shapes with a
// known answer, not a replacement for the lab's real programs.
package sim
