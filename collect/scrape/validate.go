package scrape

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// parseProfile validates a profile body, gzipped or raw protobuf, and parses
// it. Unlike profile.ParseData it never falls back to the legacy text
// formats (a text body is ErrNotProfile) and it caps the decompressed size
// at limit (no gzip bombs).
func parseProfile(raw []byte, limit int64) (*profile.Profile, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: the body is empty", ErrNotProfile)
	}
	data := raw
	if isGzip(raw) {
		var err error
		if data, err = gunzip(raw, limit); err != nil {
			return nil, err
		}
	}
	if looksLikeText(data) {
		return nil, notProfileErr(data)
	}
	p, err := profile.ParseUncompressed(data)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding the protobuf: %w; body: %s", ErrCorruptProfile, err, snippet(raw))
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptProfile, err)
	}
	return p, nil
}

func isGzip(b []byte) bool {
	return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

func gunzip(raw []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: bad gzip header: %w", ErrCorruptProfile, err)
	}
	var out bytes.Buffer
	_, err = out.ReadFrom(newLimitReader(zr, limit))
	switch {
	case errors.Is(err, ErrTooLarge):
		return nil, fmt.Errorf("decompressing the profile: %w", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: truncated gzip (the body ends early: %d bytes, %d decompressed)", ErrCorruptProfile, len(raw), out.Len())
	case err != nil:
		return nil, fmt.Errorf("%w: gzip: %w", ErrCorruptProfile, err)
	}
	return out.Bytes(), nil
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
