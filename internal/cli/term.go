package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// statusTerm is a terminal with a live status line at the bottom. Everything else written to
// it (the program's stderr, logs) is printed above the status line, which is then redrawn.
type statusTerm struct {
	mu     sync.Mutex
	w      io.Writer
	status string
	// partial is true while the last write did not end a line: the status waits until it does.
	partial bool
}

func newStatusTerm(w io.Writer) *statusTerm { return &statusTerm{w: w} }

const clearLine = "\r\x1b[K"

func (t *statusTerm) Write(p []byte) (int, error) { return t.writeTo(t.w, p) }

// through returns a writer to w, another stream that shows on the same terminal (the
// program's stdout under run): what it writes also goes above the status line, never after it.
func (t *statusTerm) through(w io.Writer) io.Writer { return termStream{t, w} }

type termStream struct {
	t *statusTerm
	w io.Writer
}

func (s termStream) Write(p []byte) (int, error) { return s.t.writeTo(s.w, p) }

// writeTo clears the status line, writes p to w and draws the status line again once the
// cursor is at the start of a line.
func (t *statusTerm) writeTo(w io.Writer, p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != "" && !t.partial {
		io.WriteString(t.w, clearLine)
	}
	n, err := w.Write(p)
	if len(p) > 0 {
		t.partial = p[len(p)-1] != '\n'
	}
	if t.status != "" && !t.partial {
		io.WriteString(t.w, t.status)
	}
	return n, err
}

// setStatus replaces the status line ("" removes it).
func (t *statusTerm) setStatus(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.partial {
		t.status = s
		return
	}
	if s == "" {
		if t.status != "" {
			io.WriteString(t.w, clearLine)
		}
	} else {
		fmt.Fprint(t.w, clearLine+s)
	}
	t.status = s
}
