package culprit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine bounds the bytes kept of one line; the rest of a longer line is
// skipped. Goroutine dump lines are short except for pathological labels.
const maxLine = 64 << 10

// lineReader reads lines with bounded memory.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, maxLine)}
}

// next returns the next line without its line ending, valid until the next
// call. At the end of input it returns io.EOF, with the last line if it had
// no newline.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = lr.br.ReadSlice('\n')
		}
		line = lr.long
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, err
}
