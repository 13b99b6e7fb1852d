package scrape

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetMax is the most characters of a body quoted in an error.
const snippetMax = 60

// snippet quotes the start of a body for an error message: at most
// snippetMax characters, whitespace runs collapsed to one space, anything
// unprintable (binary, invalid UTF-8) shown as '.', "…" when cut short.
func snippet(b []byte) string {
	var sb strings.Builder
	n := 0
	pendingSpace := false
	for len(b) > 0 && n < snippetMax {
		r, size := utf8.DecodeRune(b)
		if unicode.IsSpace(r) {
			pendingSpace = n > 0
			b = b[size:]
			continue
		}
		if pendingSpace {
			if n+1 >= snippetMax {
				break
			}
			sb.WriteByte(' ')
			n++
			pendingSpace = false
		}
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = '.'
		}
		sb.WriteRune(r)
		n++
		b = b[size:]
	}
	s := sb.String()
	if len(bytes.TrimSpace(b)) > 0 {
		// Make room for the ellipsis within the limit.
		if n >= snippetMax {
			_, size := utf8.DecodeLastRuneInString(s)
			s = s[:len(s)-size]
		}
		s = strings.TrimRight(s, " ") + "…"
	}
	return strconv.Quote(s)
}
