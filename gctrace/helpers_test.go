package gctrace_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

// formatLine prints c in the Go 1.19+ layout, at full nanosecond precision,
// so that ParseLine(formatLine(c)) == c for every cycle ParseLine returns.
func formatLine(c gctrace.Cycle) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gc %d @%ss %d%%", c.N, fixed(c.At, time.Second), c.CPUPercent)
	if c.LeakCheck {
		b.WriteString(" (checking for goroutine leaks)")
	}
	ms := func(d time.Duration) string { return fixed(d, time.Millisecond) }
	fmt.Fprintf(&b, ": %s+%s+%s ms clock, %s+%s/%s/%s+%s ms cpu, %d->%d->%d MB, %d MB goal",
		ms(c.ClockSweepTerm), ms(c.ClockMark), ms(c.ClockMarkTerm),
		ms(c.CPUSweepTerm), ms(c.CPUAssist), ms(c.CPUBackground), ms(c.CPUIdle), ms(c.CPUMarkTerm),
		c.HeapStart>>20, c.HeapEnd>>20, c.HeapLive>>20, c.Goal>>20)
	if c.HasStacksGlobals {
		fmt.Fprintf(&b, ", %d MB stacks, %d MB globals", c.Stacks>>20, c.Globals>>20)
	}
	fmt.Fprintf(&b, ", %d P", c.Procs)
	if c.Forced {
		b.WriteString(" (forced)")
	}
	return b.String()
}

// fixed prints a non-negative d in units of unit with every fraction digit.
func fixed(d, unit time.Duration) string {
	digits := len(fmt.Sprint(int64(unit))) - 1
	return fmt.Sprintf("%d.%0*d", d/unit, digits, d%unit)
}

// checkInvariants asserts what ParseLine guarantees for every cycle it
// accepts, whatever the input.
func checkInvariants(t *testing.T, line string, c gctrace.Cycle) {
	t.Helper()
	durs := []time.Duration{c.At, c.ClockSweepTerm, c.ClockMark, c.ClockMarkTerm,
		c.CPUSweepTerm, c.CPUAssist, c.CPUBackground, c.CPUIdle, c.CPUMarkTerm}
	for i, d := range durs {
		if d < 0 {
			t.Errorf("%q: duration #%d is negative: %v", line, i, d)
		}
	}
	g := c.GCCPU()
	for _, d := range []time.Duration{c.CPUSweepTerm, c.CPUAssist, c.CPUBackground, c.CPUMarkTerm} {
		if g < d {
			t.Errorf("%q: GCCPU %v < component %v", line, g, d)
		}
	}
	if c.N < 0 || c.Procs < 0 || c.CPUPercent < 0 {
		t.Errorf("%q: negative count: N=%d Procs=%d CPUPercent=%d", line, c.N, c.Procs, c.CPUPercent)
	}
	for _, v := range []uint64{c.HeapStart, c.HeapEnd, c.HeapLive, c.Goal, c.Stacks, c.Globals} {
		if v%(1<<20) != 0 {
			t.Errorf("%q: byte count %d is not a whole number of MiB", line, v)
		}
	}
	if !c.HasStacksGlobals && (c.Stacks != 0 || c.Globals != 0) {
		t.Errorf("%q: stacks/globals set without HasStacksGlobals", line)
	}
	if !gctrace.IsRuntimeTrace(line) {
		t.Errorf("%q: parsed as a cycle but IsRuntimeTrace is false", line)
	}
	canon := formatLine(c)
	back, ok, err := gctrace.ParseLine(canon)
	if !ok || err != nil || back != c {
		t.Errorf("%q: round trip through %q gave %+v, %v, %v; want %+v", line, canon, back, ok, err, c)
	}
}
