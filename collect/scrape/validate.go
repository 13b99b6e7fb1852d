package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

// parseProfile validates a profile body, gzipped or raw protobuf, and parses
// it within lim (pprofio's bounds on the decompressed size and on the memory
// parsing takes: no gzip bombs, no protobuf dense with tiny samples). Unlike
// profile.ParseData it never falls back to the legacy text formats: a text
// body is ErrNotProfile.
func parseProfile(raw []byte, lim pprofio.Limits) (*profile.Profile, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: the body is empty", ErrNotProfile)
	}
	data, err := lim.Decode("decompressing the profile", raw)
	switch {
	case errors.Is(err, pprofio.ErrTooLarge):
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w; body: %s", ErrCorruptProfile, err, snippet(raw))
	}
	if looksLikeText(data) {
		return nil, notProfileErr(data)
	}
	p, err := lim.ParseProto("decoding the protobuf", data)
	switch {
	case errors.Is(err, pprofio.ErrTooLarge):
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w; body: %s", ErrCorruptProfile, err, snippet(raw))
	}
	return p, nil
}

// looksLikeText reports whether the first bytes are printable text. A
// profile protobuf always has control bytes early: tags such as 0x08 and
// short lengths.
func looksLikeText(b []byte) bool {
	b = b[:min(len(b), 512)]
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8, unless a multi-byte rune was cut at the end.
			return len(b) < utf8.UTFMax && !utf8.FullRune(b)
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return false
		}
		b = b[size:]
	}
	return true
}

// notProfileErr describes a text body served where a profile was expected.
func notProfileErr(b []byte) error {
	t := bytes.TrimSpace(b)
	var what string
	switch {
	case bytes.Contains(b, []byte("<title>/debug/pprof/</title>")):
		what = "the body is the pprof index page, not the profile (if pprof is mounted under a path prefix, its handlers need http.StripPrefix)"
	case bytes.HasPrefix(t, []byte("<")):
		what = "the body is an HTML page"
	case bytes.Contains(b[:min(len(b), 200)], []byte(" profile: ")):
		what = "the body is a legacy text profile (debug=1), not the proto format"
	default:
		what = "the body is text"
	}
	return fmt.Errorf("%w: %s: %s", ErrNotProfile, what, snippet(b))
}
