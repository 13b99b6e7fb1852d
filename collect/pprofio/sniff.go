package pprofio

import (
	"bytes"
	"unicode/utf8"
)

// Format is what the first bytes of a file say it holds.
type Format int

// Formats Sniff tells apart.
const (
	// FormatUnknown: binary data that is neither gzip nor a protobuf profile's start.
	FormatUnknown Format = iota
	// FormatGzip: gzip; sniff what it decompresses to.
	FormatGzip
	// FormatProto: the start of a protobuf profile (a field of pprof's Profile message).
	FormatProto
	// FormatLegacy: a legacy text profile pprof parses: "heap profile: ..." (heap?debug=1),
	// contention and the other "--- ..." formats.
	FormatLegacy
	// FormatGoroutineText: a goroutine dump: "goroutine profile: total N" (debug=1, also
	// goroutineleak) or "goroutine N [state]:" (debug=2, a crash's traceback).
	FormatGoroutineText
	// FormatText: other text (a log, a README): it may hold gctrace lines.
	FormatText
)

var formatNames = [...]string{"unknown", "gzip", "protobuf", "legacy text", "goroutine text", "text"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "unknown"
}

// SniffLen is how many leading bytes Sniff needs to decide.
const SniffLen = 4096

// Sniff says what format data, the first bytes of a file (SniffLen is enough), is in. It
// reads content only: names mean nothing.
func Sniff(head []byte) Format {
	switch {
	case len(head) == 0:
		return FormatUnknown
	case isGzip(head):
		return FormatGzip
	case isText(head):
		return sniffText(head)
	case protoStart(head):
		return FormatProto
	}
	return FormatUnknown
}

// sniffText tells a text profile or goroutine dump from other text, by its first line that
// is not blank or a comment.
func sniffText(head []byte) Format {
	for rest := head; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		switch {
		case bytes.HasPrefix(t, []byte("goroutine profile: total ")), bytes.HasPrefix(t, []byte("goroutineleak profile: total ")):
			return FormatGoroutineText
		case goroutineHeader(t):
			return FormatGoroutineText
		case bytes.HasPrefix(t, []byte("heap profile:")), bytes.HasPrefix(t, []byte("--- ")):
			return FormatLegacy
		case bytes.Contains(t, []byte(" profile: total ")):
			return FormatLegacy // threadcreate and other count profiles: pprof parses them
		}
		return FormatText
	}
	return FormatText
}

// goroutineHeader reports a debug=2 header: "goroutine 19 [chan receive]:".
func goroutineHeader(t []byte) bool {
	rest, ok := bytes.CutPrefix(t, []byte("goroutine "))
	if !ok || len(rest) == 0 || rest[0] < '0' || rest[0] > '9' {
		return false
	}
	return bytes.IndexByte(rest, '[') > 0
}

// isText reports whether head is text: valid UTF-8 (a rune cut at the end allowed) without
// control characters other than tab, newline, carriage return and escape.
func isText(head []byte) bool {
	for i := 0; i < len(head); {
		c := head[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b || c == 0x7f {
			return false
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		i += n
	}
	return true
}

// protoStart reports whether head starts with fields of pprof's Profile message: every
// field that fits in head has a field number of that message (1 to 14) with its wire type.
func protoStart(head []byte) bool {
	fields := 0
	for b := head; len(b) > 0; {
		f, rest, err := nextField(b)
		if err != nil {
			return fields > 0 // cut by the end of head
		}
		if !profileField(f) {
			return false
		}
		fields++
		b = rest
	}
	return fields > 0
}

// profileField reports whether f can be a field of the Profile message.
func profileField(f field) bool {
	switch f.num {
	case 1, 2, 3, 4, 5, 6, 11:
		return f.typ == wireBytes
	case 7, 8, 9, 10, 12, 14:
		return f.typ == wireVarint
	case 13:
		return f.typ == wireVarint || f.typ == wireBytes
	}
	return false
}
