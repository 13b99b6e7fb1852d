// Package gctrace parses the per-cycle lines the Go runtime writes to stderr
// under GODEBUG=gctrace=1, in every format since Go 1.5.
//
// The current format (runtime/mgc.go, gcMarkTermination) is
//
//	gc 29 @2.942s 0%: 0.13+1.3+0.005 ms clock, 0.26+0/0.40/0.83+0.010 ms cpu, 127->128->65 MB, 130 MB goal, 0 MB stacks, 0 MB globals, 2 P
//
// with these fields, in order:
//
//   - gc N: the cycle number, counting from 1 in each process.
//   - @S s: seconds since program start when the cycle began, three decimals.
//   - P%: the integer percentage of all CPU time (GOMAXPROCS x wall time)
//     spent in GC since program start, not counting idle-priority marking.
//     Go 1.27 (and Go 1.26 built with GOEXPERIMENT=goroutineleakprofile)
//     follows it with " (checking for goroutine leaks)" when the cycle ran
//     goroutine leak detection: a goroutineleak profile was written. Such a
//     cycle also ends in " (forced)".
//   - a+b+c ms clock: wall time of STW sweep termination, concurrent mark and
//     STW mark termination, in milliseconds.
//   - a+b/c/d+e ms cpu: CPU time of STW sweep termination (its wall time x
//     min(GOMAXPROCS, CPUs)), mark assists / dedicated+fractional background
//     marking / idle marking, and STW mark termination (like the first), in
//     milliseconds.
//   - h0->h1->h2 MB: heap size at GC start, at the end of marking, and the
//     heap marked live; MiB (bytes>>20, truncated).
//   - G MB goal: the heap goal of this cycle, MiB. Under a memory limit h1 can
//     exceed it.
//   - S MB stacks, G MB globals: scannable stack and globals bytes, MiB;
//     printed since Go 1.18.
//   - N P: GOMAXPROCS.
//   - " (forced)": the cycle was requested by runtime.GC or
//     debug.FreeOSMemory. The periodic (2-minute) forced GC is not marked
//     this way; it is announced by a separate "GC forced" line.
//
// Durations under 10 ms print with two significant digits and at most three
// decimals ("0.050", "1.3"); from 10 ms on they print as whole milliseconds.
// Go 1.5 and 1.6 printed five clock phases and five cpu terms (sweep
// termination, scan, install write barrier, mark, mark termination); they are
// folded into the three-phase fields (see [Cycle]).
//
// Other runtime trace lines can appear on the same stream: "scav ..."
// (GODEBUG=scavtrace=1, Go 1.13+), "scvgN: ..." (the scavenger under
// gctrace=1 before Go 1.13), "pacer: ..." (GODEBUG=gcpacertrace=1),
// "scan: ..." (gctrace=2, Go 1.26) and "GC forced". [IsRuntimeTrace]
// recognises them; [ParseLine] and [Scanner] yield only the cycle lines.
package gctrace

import (
	"math"
	"time"
)

// Cycle is one "gc N @..." line.
//
// Lines with more than three clock phases (Go 1.5, 1.6) map the first phase
// to ClockSweepTerm, the sum of the middle phases to ClockMark and the last to
// ClockMarkTerm. For their cpu terms, the a/b/c group is
// assist/background/idle and every other middle term is added to
// CPUBackground. Sums saturate at the largest time.Duration.
type Cycle struct {
	N          int           // cycle number
	At         time.Duration // time since program start ("@2.942s")
	CPUPercent int           // GC CPU % since program start (integer in the line)

	// clock phases: STW sweep termination, concurrent mark, STW mark termination.
	ClockSweepTerm, ClockMark, ClockMarkTerm time.Duration
	// cpu phases: STW1 + assist/background/idle + STW2.
	CPUSweepTerm, CPUAssist, CPUBackground, CPUIdle, CPUMarkTerm time.Duration

	HeapStart, HeapEnd, HeapLive, Goal uint64 // bytes (the line's MB are MiB: multiply by 1<<20)
	Stacks, Globals                    uint64 // bytes; only Go 1.18+ lines have them
	HasStacksGlobals                   bool   // the line had stacks/globals fields

	Procs     int  // "N P"
	Forced    bool // " (forced)"
	LeakCheck bool // " (checking for goroutine leaks)" after the % (Go 1.27; Go 1.26 with the experiment)
}

// GCCPU returns the GC CPU time of the cycle counted the way gctrace's % counts
// it (all cpu phases except idle marking). The sum saturates at the largest
// time.Duration.
func (c Cycle) GCCPU() time.Duration {
	return addSat(addSat(c.CPUSweepTerm, c.CPUAssist), addSat(c.CPUBackground, c.CPUMarkTerm))
}

// addSat adds two non-negative durations, saturating instead of overflowing.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
