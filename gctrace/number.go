package gctrace

import (
	"math"
	"time"
)

// parseUint parses a non-empty run of ASCII digits. ok is false for anything
// else, including values above max.
func parseUint(s string, max uint64) (v uint64, ok bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		if v > (max-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	return v, true
}

// parseInt parses a non-negative decimal int.
func parseInt(s string) (int, bool) {
	v, ok := parseUint(s, math.MaxInt)
	return int(v), ok
}

// parseMiB parses a decimal count of MiB and returns bytes.
func parseMiB(s string) (uint64, bool) {
	v, ok := parseUint(s, math.MaxUint64>>20)
	return v << 20, ok
}

// parseFixed parses "123" or "123.456" (no sign, no exponent) as a count of
// unit (in nanoseconds). Fraction digits finer than a nanosecond are
// truncated.
func parseFixed(s string, unit int64) (time.Duration, bool) {
	intPart, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			intPart, frac = s[:i], s[i+1:]
			if frac == "" {
				return 0, false
			}
			break
		}
	}
	whole, ok := parseUint(intPart, uint64(math.MaxInt64/unit))
	if !ok {
		return 0, false
	}
	ns := int64(whole) * unit
	scale := unit // worth of 1 in the previous digit position
	for i := 0; i < len(frac); i++ {
		d := frac[i] - '0'
		if d > 9 {
			return 0, false
		}
		scale /= 10
		add := int64(d) * scale
		if ns > math.MaxInt64-add {
			return 0, false
		}
		ns += add
	}
	return time.Duration(ns), true
}

// parseMS parses a millisecond value as printed by the runtime's fmtNSAsMS.
func parseMS(s string) (time.Duration, bool) { return parseFixed(s, int64(time.Millisecond)) }
