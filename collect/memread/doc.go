// Package memread reads what a Go process keeps about its own memory from the outside, through
// its memory (/proc/PID/mem on Linux, or a core file), for a process that serves neither
// net/http/pprof nor an embedded memdoctor agent:
//
//   - the heap profile, as /debug/pprof/heap would serve it: the runtime's memory-profile
//     buckets (runtime.mbuckets), each with its stack and its published counts, symbolized
//     from the runtime's own function table as runtime.CallersFrames does, and scaled as
//     runtime/pprof scales them;
//   - the memory statistics and GC figures that runtime/metrics reports, from the runtime's
//     memstats, gcController and work.cpuStats, and the goroutine count as runtime.NumGoroutine
//     computes it;
//   - the goroutine profile, for which the process is stopped (every thread, with ptrace, for
//     as short a time as it takes to list the goroutines' stacks) and always resumed;
//   - the runtime's stop-the-world pause histograms (/sched/pauses/{total,stopping}/{gc,other}),
//     so that what a request to the process's pprof stopped it for is known in its own words.
//
// The heap profile, the figures and the pauses are read while the process runs: nothing stops it. A
// read that races the runtime (a GC publishing a cycle while the buckets are read, counts
// being updated) is detected and read again, or the bucket is left out with a note: never a
// crash, never a profile that mixes two cycles or counts a cycle's counts half moved (see
// readBuckets). What runtime.MemProfile would publish for good when nothing is published yet,
// a Reader counts as published until the runtime has published as much: its readings are
// those /debug/pprof/heap would have served, fetched at each.
//
// Addresses come from the executable's symbol table, layouts from its DWARF types (package
// process): never from offsets assumed per release. A program that links no profiling has
// sampling off (runtime.MemProfileRate 0); EnableHeapProfiling turns it on, the one write
// memdoctor ever makes to a process, and only at the user's request.
package memread
