package gctrace

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// leakCheckNote is what Go 1.26 prints after the % when the cycle looked for
// goroutine leaks (runtime/mgc.go, gcMarkTermination).
const leakCheckNote = "(checking for goroutine leaks)"

// ParseLine parses one line. ok is false (and err nil) when the line is not a gc
// cycle line (program output, "scav"/"scvg"/"pacer:" lines, blank). err is
// non-nil when the line clearly is a gc line ("gc N @") but cannot be parsed;
// the error names what was wrong, and ok is false.
//
// The cycle may start anywhere in the line ("Feb 26 12:52:23.767 gc 93 @..."),
// so log prefixes and program output interleaved in front of it are skipped.
// Unknown comma-separated fields and unknown parenthesised notes are ignored,
// so that a future runtime adding a field does not break the parser.
func ParseLine(line string) (c Cycle, ok bool, err error) {
	start := cycleStart(line, 0)
	if start < 0 {
		return Cycle{}, false, nil
	}
	c, err = parseCycle(line[start:])
	if err == nil {
		return c, true, nil
	}
	// Output interleaved with the trace can put a broken cycle in front of an
	// intact one on the same line.
	for i := cycleStart(line, start+1); i >= 0; i = cycleStart(line, i+1) {
		if c2, err2 := parseCycle(line[i:]); err2 == nil {
			return c2, true, nil
		}
	}
	return Cycle{}, false, err
}

// cycleStart returns the index of the first "gc N @D" (D a digit) at or after
// from, or -1.
func cycleStart(s string, from int) int {
	for from < len(s) {
		i := strings.Index(s[from:], "gc ")
		if i < 0 {
			return -1
		}
		i += from
		if looksLikeCycle(s[i+len("gc "):]) {
			return i
		}
		from = i + 1
	}
	return -1
}

// looksLikeCycle reports whether s, the text after "gc ", starts "N @D".
func looksLikeCycle[T string | []byte](s T) bool {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n > 0 && len(s) > n+2 && s[n] == ' ' && s[n+1] == '@' && isDigit(s[n+2])
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// parseCycle parses s, which starts with "gc N @D".
func parseCycle(s string) (Cycle, error) {
	var c Cycle
	head, body, found := strings.Cut(s, ":")
	if !found {
		return c, fmt.Errorf("gctrace: %q: no ':' after the header", clip(s))
	}
	if err := parseHeader(&c, head); err != nil {
		return c, err
	}
	if err := parseBody(&c, body); err != nil {
		return c, fmt.Errorf("gctrace: gc %d: %w", c.N, err)
	}
	return c, nil
}

// parseHeader parses "gc N @S.SSSs P%" and the notes after the %.
func parseHeader(c *Cycle, h string) error {
	num, rest, _ := strings.Cut(h[len("gc "):], " ")
	var ok bool
	if c.N, ok = parseInt(num); !ok {
		return fmt.Errorf("gctrace: gc cycle number %q out of range", clip(num))
	}
	at, rest, _ := strings.Cut(rest[len("@"):], " ")
	secs, hasS := strings.CutSuffix(at, "s")
	if c.At, ok = parseFixed(secs, int64(time.Second)); !ok || !hasS {
		return fmt.Errorf("gctrace: gc %d: bad start time %q (want seconds like @2.942s)", c.N, clip(at))
	}
	pct, notes, found := strings.Cut(rest, "%")
	if !found {
		return fmt.Errorf("gctrace: gc %d: no GC CPU %% before the ':'", c.N)
	}
	if c.CPUPercent, ok = parseInt(pct); !ok {
		return fmt.Errorf("gctrace: gc %d: bad GC CPU percentage %q", c.N, clip(pct))
	}
	c.LeakCheck = strings.Contains(notes, leakCheckNote)
	return nil
}

// Bits recording which body fields a line had.
const (
	hasClock = 1 << iota
	hasCPU
	hasHeap
	hasGoal
	hasStacks
	hasGlobals
	hasProcs
)

// required lists, in line order, the body fields every format has.
var required = [...]struct {
	bit  int
	name string
}{
	{hasClock, `"ms clock"`}, {hasCPU, `"ms cpu"`}, {hasHeap, `"->-> MB" heap sizes`},
	{hasGoal, `"MB goal"`}, {hasProcs, `"P"`},
}

// parseBody parses the comma-separated fields after the header's ':'. The
// first occurrence of a field wins; unknown fields are ignored.
func parseBody(c *Cycle, body string) error {
	seen := 0
	for body != "" {
		var seg string
		seg, body, _ = strings.Cut(body, ",")
		val, unit, _ := strings.Cut(strings.TrimSpace(seg), " ")
		bit, err := parseField(c, seen, val, unit)
		if err != nil {
			return err
		}
		seen |= bit
	}
	for _, r := range required {
		if seen&r.bit == 0 {
			return fmt.Errorf("no %s field", r.name)
		}
	}
	c.HasStacksGlobals = seen&(hasStacks|hasGlobals) != 0
	return nil
}

// parseField parses one "value unit" field unless seen already has it, and
// returns the field's bit (0 for an unknown field).
func parseField(c *Cycle, seen int, val, unit string) (int, error) {
	var bit int
	var dst *uint64
	switch {
	case unit == "ms clock":
		bit = hasClock
	case unit == "ms cpu":
		bit = hasCPU
	case unit == "MB":
		bit = hasHeap
	case unit == "MB goal":
		bit, dst = hasGoal, &c.Goal
	case unit == "MB stacks":
		bit, dst = hasStacks, &c.Stacks
	case unit == "MB globals":
		bit, dst = hasGlobals, &c.Globals
	case unit == "P" || strings.HasPrefix(unit, "P "):
		bit = hasProcs
	default:
		return 0, nil
	}
	if seen&bit != 0 {
		return 0, nil
	}
	var err error
	switch bit {
	case hasClock:
		err = parseClock(c, val)
	case hasCPU:
		err = parseCPU(c, val)
	case hasHeap:
		err = parseHeap(c, val)
	case hasProcs:
		var ok bool
		if c.Procs, ok = parseInt(val); !ok {
			err = fmt.Errorf("bad GOMAXPROCS %q", clip(val))
		}
		c.Forced = strings.HasPrefix(strings.TrimSpace(unit[len("P"):]), "(forced)")
	default:
		var ok bool
		if *dst, ok = parseMiB(val); !ok {
			err = fmt.Errorf("bad %q value %q", unit, clip(val))
		}
	}
	return bit, err
}

// parseClock parses "a+b+c" (or Go 1.5's "a+b+c+d+e") wall-clock milliseconds.
func parseClock(c *Cycle, v string) error {
	n := strings.Count(v, "+") + 1
	if n < 3 {
		return fmt.Errorf("clock %q: want at least 3 phases", clip(v))
	}
	for i := 0; i < n; i++ {
		var tok string
		tok, v, _ = strings.Cut(v, "+")
		d, ok := parseMS(tok)
		if !ok {
			return fmt.Errorf("clock phase %d: bad milliseconds %q", i+1, clip(tok))
		}
		switch i {
		case 0:
			c.ClockSweepTerm = d
		case n - 1:
			c.ClockMarkTerm = d
		default:
			c.ClockMark = addSat(c.ClockMark, d)
		}
	}
	return nil
}

// parseCPU parses "a+b/c/d+e" (or Go 1.5's "a+b+c+d/e/f+g") CPU milliseconds.
func parseCPU(c *Cycle, v string) error {
	n := strings.Count(v, "+") + 1
	if n < 3 {
		return fmt.Errorf("cpu %q: want at least 3 terms", clip(v))
	}
	marks := 0
	for i := 0; i < n; i++ {
		var tok string
		tok, v, _ = strings.Cut(v, "+")
		if i > 0 && i < n-1 && strings.Contains(tok, "/") {
			if marks++; marks > 1 {
				return fmt.Errorf("cpu: two assist/background/idle groups")
			}
			if err := parseMarkCPU(c, tok); err != nil {
				return err
			}
			continue
		}
		d, ok := parseMS(tok)
		if !ok {
			return fmt.Errorf("cpu term %d: bad milliseconds %q", i+1, clip(tok))
		}
		switch i {
		case 0:
			c.CPUSweepTerm = d
		case n - 1:
			c.CPUMarkTerm = d
		default:
			c.CPUBackground = addSat(c.CPUBackground, d)
		}
	}
	if marks == 0 {
		return errors.New("cpu: no assist/background/idle group")
	}
	return nil
}

// parseMarkCPU parses the "assist/background/idle" group.
func parseMarkCPU(c *Cycle, g string) error {
	a, rest, _ := strings.Cut(g, "/")
	b, i, _ := strings.Cut(rest, "/")
	assist, ok1 := parseMS(a)
	bg, ok2 := parseMS(b)
	idle, ok3 := parseMS(i)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("cpu: bad assist/background/idle group %q", clip(g))
	}
	c.CPUAssist, c.CPUIdle = assist, idle
	c.CPUBackground = addSat(c.CPUBackground, bg)
	return nil
}

// parseHeap parses "h0->h1->h2" (MiB).
func parseHeap(c *Cycle, v string) error {
	h0, rest, _ := strings.Cut(v, "->")
	h1, h2, _ := strings.Cut(rest, "->")
	var ok1, ok2, ok3 bool
	c.HeapStart, ok1 = parseMiB(h0)
	c.HeapEnd, ok2 = parseMiB(h1)
	c.HeapLive, ok3 = parseMiB(h2)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("bad heap sizes %q (want start->end->live MB)", clip(v))
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 32
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
