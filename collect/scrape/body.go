package scrape

import (
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
