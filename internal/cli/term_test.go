package cli

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/recorder"
)

// screen is a fake terminal: it keeps what a person would see, honouring the carriage return,
// the newline and "erase to the end of the line" (ESC [ K), the sequences statusTerm uses.
type screen struct {
	lines [][]rune
	col   int
}

func (s *screen) Write(p []byte) (int, error) {
	if s.lines == nil {
		s.lines = [][]rune{nil}
	}
	str := string(p)
	for len(str) > 0 {
		cur := &s.lines[len(s.lines)-1]
		switch {
		case strings.HasPrefix(str, "\x1b[K"):
			*cur = (*cur)[:min(s.col, len(*cur))]
			str = str[3:]
			continue
		case str[0] == '\r':
			s.col = 0
		case str[0] == '\n':
			s.lines = append(s.lines, nil)
			s.col = 0
		default:
			r := []rune(str[:1])[0]
			if s.col < len(*cur) {
				(*cur)[s.col] = r
			} else {
				*cur = append(*cur, r)
			}
			s.col++
		}
		str = str[1:]
	}
	return len(p), nil
}

func (s *screen) text() []string {
	var out []string
	for _, l := range s.lines {
		out = append(out, string(l))
	}
	return out
}

// TestStatusLineAndProgramOutput: under run on a terminal, the program's own stdout and
// stderr and memdoctor's logs all print above the live status line, never after it on the
// same line, and the status line comes back below them.
func TestStatusLineAndProgramOutput(t *testing.T) {
	scr := &screen{}
	term := newStatusTerm(scr)
	e := &env{stdout: scr, stderr: term, term: term, stdoutTerm: true, getenv: func(string) string { return "" }}
	e.log = newLogger(term, "", "")
	var cf collectFlags
	cfg := cf.config(e, "run", "prog", flag.NewFlagSet("run", flag.ContinueOnError))
	status := func(pid int) { cfg.OnStatus(recorder.Status{Elapsed: 3 * time.Second, PID: pid, Target: "prog"}) }

	status(7)
	cfg.Stdout.Write([]byte("listening on :8080\n"))
	cfg.Stderr.Write([]byte("warn: slow request\n"))
	status(7)
	e.log.Info("found the pprof endpoint")
	cfg.Stdout.Write([]byte("progress 10%")) // a partial line: the status waits for its end
	status(8)                                // (and is not drawn into it)
	cfg.Stdout.Write([]byte(", 20%, done\n"))

	got := scr.text()
	want := []string{
		"listening on :8080",
		"warn: slow request",
		"memdoctor: found the pprof endpoint",
		"progress 10%, 20%, done",
	}
	if len(got) != len(want)+1 {
		t.Fatalf("screen:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("line %d: %q, want %q\nscreen:\n%s", i, got[i], w, strings.Join(got, "\n"))
		}
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last, "memdoctor 3s  prog[8]") {
		t.Errorf("last line %q, want the status line of pid 8", last)
	}
}
