package gctrace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLineLen is the longest line (without its newline) a Scanner reads;
// longer lines are skipped without being buffered whole.
const maxLineLen = 64 << 10

// Scanner reads a stream line by line (bounded line length: a line longer than
// 64 KiB is skipped, never buffered whole) and yields cycles.
//
// Its memory is one 64 KiB buffer plus the line being parsed, however long
// the stream. A line may end in "\n" or "\r\n"; the last line needs no newline.
type Scanner struct {
	r       *bufio.Reader
	cycle   Cycle
	err     error
	done    bool
	skipped int
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader) *Scanner {
	// Hide r's type so that bufio cannot hand back a caller's *bufio.Reader
	// with a different size: the line limit must be ours.
	return &Scanner{r: bufio.NewReaderSize(struct{ io.Reader }{r}, maxLineLen+1)}
}

// Scan advances to the next gc cycle line, skipping other lines. It returns
// false at the end of the stream or on a read error (see Err).
func (s *Scanner) Scan() bool {
	for !s.done {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if hasCycleStart(line) {
				s.skipped++
			}
			s.discardLine()
			continue
		}
		if err != nil {
			s.done = true
			if err != io.EOF {
				s.err = err
			}
		}
		if !hasCycleStart(line) {
			continue
		}
		c, ok, perr := ParseLine(string(line))
		if perr != nil {
			s.skipped++
		}
		if ok {
			s.cycle = c
			return true
		}
	}
	return false
}

// discardLine reads and drops the rest of an over-long line.
func (s *Scanner) discardLine() {
	for {
		_, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			s.done = true
			if err != io.EOF {
				s.err = err
			}
		}
		return
	}
}

// Cycle returns the cycle found by the last successful Scan.
func (s *Scanner) Cycle() Cycle { return s.cycle }

// Err returns the first read error other than io.EOF. Lines that fail to parse
// are not errors; see Skipped.
func (s *Scanner) Err() error { return s.err }

// Skipped returns how many gc-looking lines failed to parse, including gc-looking
// lines dropped for being longer than 64 KiB.
func (s *Scanner) Skipped() int { return s.skipped }

// hasCycleStart is a cheap, allocation-free prefilter for cycleStart on a
// byte line: it reports whether the line holds "gc N @D".
func hasCycleStart(b []byte) bool {
	for {
		i := bytes.Index(b, []byte("gc "))
		if i < 0 {
			return false
		}
		b = b[i+len("gc "):]
		if looksLikeCycle(b) {
			return true
		}
	}
}
