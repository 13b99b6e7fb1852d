package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// limitReader reads at most limit bytes; one byte more is ErrTooLarge. It
// never asks the source for more than one byte past the limit.
type limitReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func newLimitReader(r io.Reader, limit int64) *limitReader {
	return &limitReader{r: r, left: limit, limit: limit}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, tooLarge(l.limit)
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: the body exceeds the limit of %s", ErrTooLarge, formatBytes(limit))
}

// countingReader remembers how much was read and the first error other than
// io.EOF, to tell a broken connection from a bad body.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// headReader keeps the first bytes read through it, to quote them in errors.
type headReader struct {
	r    io.Reader
	head []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := cap(h.head) - len(h.head); room > 0 && n > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// drainClose reads a little of what is left, so that the connection can be
// reused, and closes the body.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	_ = body.Close()
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Body is a response body held in chunks: reading it copies nothing and grows no buffer by
// doubling, so a body of N bytes costs N bytes (plus at most one chunk), where a growing
// bytes.Buffer costs up to three times N.
type Body struct {
	chunks [][]byte
	n      int64
}

// Chunk sizes: the first, doubling up to the largest.
const (
	firstChunk = 64 << 10
	maxChunk   = 4 << 20
)

// readBody reads a whole body. With a Content-Length it reads into one chunk of that size.
// It fails with ErrTooLarge past limit bytes, without reading more than one byte past it.
func readBody(r io.Reader, contentLength, limit int64) (*Body, error) {
	if contentLength > limit {
		return nil, tooLarge(limit)
	}
	r = newLimitReader(r, limit)
	b := &Body{}
	size := int64(firstChunk)
	if contentLength >= 0 {
		size = contentLength + 1 // one more byte to read the end into
	}
	for {
		chunk := make([]byte, size)
		n, err := io.ReadFull(r, chunk)
		if n > 0 {
			b.chunks = append(b.chunks, chunk[:n:n])
			b.n += int64(n)
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return b, nil
		case err != nil:
			return b, err
		}
		size = min(2*size, maxChunk)
	}
}

// Len is the body's size in bytes.
func (b *Body) Len() int64 { return b.n }

// Reader reads the body.
func (b *Body) Reader() io.Reader {
	rs := make([]io.Reader, len(b.chunks))
	for i, c := range b.chunks {
		rs[i] = bytes.NewReader(c)
	}
	return io.MultiReader(rs...)
}

// Bytes returns the body in one slice: its only chunk, or a copy of its chunks.
func (b *Body) Bytes() []byte {
	switch len(b.chunks) {
	case 0:
		return nil
	case 1:
		return b.chunks[0]
	}
	out := make([]byte, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return out
}

// head returns up to the first n bytes.
func (b *Body) head(n int) []byte {
	if len(b.chunks) > 0 && len(b.chunks[0]) >= n {
		return b.chunks[0][:n]
	}
	var out []byte
	for _, c := range b.chunks {
		out = append(out, c[:min(len(c), n-len(out))]...)
		if len(out) == n {
			break
		}
	}
	return out
}
