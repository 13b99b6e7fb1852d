// Package sanitize makes strings from profiles and targets safe to print on a terminal:
// function names, file names, labels, error bodies, notes. A profile is the target's to
// write, and a terminal obeys escape sequences: "\x1b]0;...\x07" retitles the window,
// "\x1b[2J" clears the screen, and others can rewrite what was printed before. Text shows
// every control character escaped instead. It is a leaf of memdoctor's layers
// (docs/development.md): it imports nothing of memdoctor's, so that the holders, the report
// and the command print through it alike.
package sanitize

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text returns s with every character a terminal could act on shown escaped, as Go would
// quote it: C0 controls (newline and tab included), DEL, C1 controls, other non-printable
// characters (bidirectional overrides and other format characters among them) and bytes
// that are not UTF-8. What prints as itself is left alone; a string without such characters
// comes back as it is, unallocated.
func Text(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for rest := s[i:]; len(rest) > 0; {
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, rest[0])
		case printable(r):
			b.WriteString(rest[:size])
		case short[r] != "":
			b.WriteString(short[r])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		rest = rest[size:]
	}
	return b.String()
}

// short are the escapes Go writes for some controls.
var short = map[rune]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`}

// printable reports whether r prints as itself: the space, or what strconv.IsPrint accepts.
func printable(r rune) bool { return r == ' ' || strconv.IsPrint(r) }

// firstUnsafe returns the index of the first character Text escapes, -1 if none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !printable(r) {
			return i
		}
		i += size
	}
	return -1
}
