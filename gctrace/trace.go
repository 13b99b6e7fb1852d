package gctrace

import "strings"

// IsRuntimeTrace reports whether a stderr line is runtime trace output that a
// wrapper should capture rather than show: gc cycle lines, "scav ..." (Go
// 1.13+ scavtrace), old "scvgN: ..." lines, "pacer: ..." lines (gcpacertrace).
// Cheap: no allocation, used on every stderr line of a running program.
//
// It also recognises the other lines the runtime prints under gctrace: "GC
// forced" (the periodic forced GC) and gctrace=2's "scan: total ..." and
// "scan: class ..." lines. A gc cycle ("gc N @" followed by a digit) is
// recognised anywhere in the line, as [ParseLine] finds it; the other kinds
// only at the start of the line (after spaces). A gc line that ParseLine
// rejects is still runtime trace. A trailing "\r" or "\n" is ignored.
func IsRuntimeTrace(line string) bool {
	s := strings.TrimLeft(line, " \t")
	switch {
	case strings.HasPrefix(s, "pacer: "):
		return true
	case strings.HasPrefix(s, "scav "):
		return len(s) > len("scav ") && isDigit(s[len("scav ")])
	case strings.HasPrefix(s, "scvg"):
		return isScvg(s[len("scvg"):])
	case strings.HasPrefix(s, "scan: "):
		return isScan(s[len("scan: "):])
	case strings.TrimRight(s, " \r\n") == "GC forced":
		return true
	}
	return cycleStart(line, 0) >= 0
}

// isScvg reports whether s, the text after "scvg", is "N: " or "-1: " (the
// pre-Go 1.13 scavenger: "scvg0: inuse: 3, ...", "scvg1: 0 MB released",
// "scvg-1: ..." from debug.FreeOSMemory).
func isScvg(s string) bool {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n > 0 && strings.HasPrefix(s[n:], ": ")
}

// isScan reports whether s, the text after "scan: ", is gctrace=2's
// "total N..." or "class NB ..." / "class L ...".
func isScan(s string) bool {
	if rest, ok := strings.CutPrefix(s, "total "); ok {
		return len(rest) > 0 && isDigit(rest[0])
	}
	if rest, ok := strings.CutPrefix(s, "class "); ok {
		return strings.HasPrefix(rest, "L ") || len(rest) > 0 && isDigit(rest[0])
	}
	return false
}
