package sim

import (
	"fmt"
	"strconv"
)

// gctraceLine formats a cycle as the runtime prints it under GODEBUG=gctrace=1
// (runtime/mgc.go, gcMarkTermination).
func gctraceLine(c gcCycle) string {
	ms := func(s float64) string { return fmtNSAsMS(uint64(s * 1e9)) }
	line := fmt.Sprintf("gc %d @%s %d%%: %s+%s+%s ms clock, %s+%s/%s/%s+%s ms cpu, %d->%d->%d MB, %d MB goal, %d MB stacks, %d MB globals, %d P",
		c.n, fmtSeconds(c.at), c.cpuPercent,
		ms(c.clockSweep), ms(c.clockMark), ms(c.clockTerm),
		ms(c.cpuSweep), ms(c.cpuAssist), ms(c.cpuBackground), ms(c.cpuIdle), ms(c.cpuTerm),
		uint64(c.h0)>>20, uint64(c.h1)>>20, uint64(c.h2)>>20, uint64(c.goal)>>20,
		uint64(c.stacks)>>20, uint64(c.globals)>>20, c.procs)
	if c.forced {
		line += " (forced)"
	}
	return line
}

// fmtSeconds prints seconds since start as the runtime does: milliseconds with three
// decimals, then "s".
func fmtSeconds(s float64) string {
	return itoaDiv(uint64(s*1e3), 3) + "s"
}

// fmtNSAsMS is the runtime's fmtNSAsMS: whole milliseconds from 10 ms on, else two
// significant digits with at most three decimals.
func fmtNSAsMS(ns uint64) string {
	if ns >= 10e6 {
		return itoaDiv(ns/1e6, 0)
	}
	x := ns / 1e3
	if x == 0 {
		return "0"
	}
	dec := 3
	for x >= 100 {
		x /= 10
		dec--
	}
	return itoaDiv(x, dec)
}

// itoaDiv formats val/(10**dec), as the runtime's itoaDiv.
func itoaDiv(val uint64, dec int) string {
	s := strconv.FormatUint(val, 10)
	if dec == 0 {
		return s
	}
	for len(s) <= dec {
		s = "0" + s
	}
	return s[:len(s)-dec] + "." + s[len(s)-dec:]
}
