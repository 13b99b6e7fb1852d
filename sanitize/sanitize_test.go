package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"main.(*Cache).Put":               "main.(*Cache).Put",
		"":                                "",
		"héllo wörld 日本 😀":                "héllo wörld 日本 😀",
		"main.f\x1b]0;pwned\x07":          `main.f\x1b]0;pwned\a`,
		"\x1b[2Jmain.g":                   `\x1b[2Jmain.g`,
		"a\nb\tc\rd":                      `a\nb\tc\rd`,
		"nul\x00del\x7f":                  `nul\x00del\x7f`,
		"c1\u009b31mcsi\u0085nel":         `c1\u009b31mcsi\u0085nel`,
		"bidi\u202eevil\u2066":            `bidi\u202eevil\u2066`,
		"bad\xffutf8\x9b":                 `bad\xffutf8\x9b`,
		`C:\src\main.go`:                  `C:\src\main.go`,
		"tag\U000E0041":                   `tag\U000e0041`,
		strings.Repeat("x", 100) + "\x1b": strings.Repeat("x", 100) + `\x1b`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextDoesNotAllocateForCleanStrings(t *testing.T) {
	s := "github.com/acme/svc.(*Server).handle"
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Errorf("%v allocations for a clean string", n)
	}
}

// FuzzText: the output holds no byte a terminal acts on (C0, DEL, C1, invalid UTF-8), and a
// string that needs no escaping comes back unchanged.
func FuzzText(f *testing.F) {
	for _, s := range []string{"main.f", "\x1b]0;pwned\x07", "\x1b[2J", "\u009b", "\xff", "a\u202eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("Text(%q) = %q holds %U", s, out, r)
			}
		}
		if firstUnsafe(s) < 0 && out != s {
			t.Fatalf("Text(%q) = %q: a clean string changed", s, out)
		}
	})
}
