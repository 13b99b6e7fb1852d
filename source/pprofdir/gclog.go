package pprofdir

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/infile"
)

// maxLogBytes bounds what is read of one gctrace log (decompressed): at a GC a second, years
// of cycles.
const maxLogBytes = 1 << 30

// maxLogLine bounds a log line; a longer one is skipped without being buffered whole.
const maxLogLine = 64 << 10

// gcLog is a file of GODEBUG=gctrace=1 lines, and the runs of the program it holds: a run
// ends where the cycle numbers start again (the program restarted, its log appended to).
type gcLog struct {
	path, name string
	gzipped    bool
	mtime      time.Time
	runs       []*gcRun
	skipped    int  // gc lines that did not parse
	cut        bool // the log is longer than maxLogBytes: its end was not read
}

// gcRun is one run of the program in a log.
type gcRun struct {
	cycles         int
	lastN          int
	lastAt         time.Duration
	lastEnd        time.Duration // the last cycle's end: its start plus its clock phases
	timed          int           // cycles whose line carries a time
	start          time.Time     // when the program started, as the times say (zero: unknown)
	fromMtime      bool          // start assumed from the file's modification time
	dropped        bool          // cannot be placed in time
	first, lastPos time.Time     // the placed times of its first and last cycles
}

// place returns the time of a cycle of the run: the program's start plus its "@" offset.
func (r *gcRun) place(c gctrace.Cycle) time.Time { return r.start.Add(c.At) }

// clock is a cycle's wall time from its start to the end of mark termination, when its line
// was written.
func clock(c gctrace.Cycle) time.Duration { return c.ClockSweepTerm + c.ClockMark + c.ClockMarkTerm }

// scanLog reads a gctrace log once, finding its runs and when each started: from the lines'
// times (the earliest of time - "@" offset - the cycle's clock time, since a log stamps a
// line when it reads it), else, for a log without any, by assuming that its last line was
// written when the file was last modified.
func scanLog(path, name string, gzipped bool, mtime time.Time) (*gcLog, error) {
	l := &gcLog{path: path, name: name, gzipped: gzipped, mtime: mtime}
	var cur *gcRun
	err := l.each(func(t time.Time, c gctrace.Cycle) {
		if cur == nil || c.N <= cur.lastN || c.At < cur.lastAt {
			cur = &gcRun{}
			l.runs = append(l.runs, cur)
		}
		cur.cycles++
		cur.lastN, cur.lastAt, cur.lastEnd = c.N, c.At, c.At+clock(c)
		if !t.IsZero() {
			cur.timed++
			if s := t.Add(-c.At - clock(c)); cur.start.IsZero() || s.Before(cur.start) {
				cur.start = s
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if n := len(l.runs); n > 0 && l.runs[n-1].timed == 0 && !mtime.IsZero() && !l.cut {
		last := l.runs[n-1]
		last.start, last.fromMtime = mtime.Add(-last.lastEnd), true
	}
	for _, r := range l.runs {
		if r.start.IsZero() {
			r.dropped = true
		} else {
			r.lastPos = r.start.Add(r.lastAt)
		}
	}
	return l, nil
}

// cycles returns how many cycles the log holds, and how many of them are placed in time.
func (l *gcLog) cycles() (all, placed int) {
	for _, r := range l.runs {
		all += r.cycles
		if !r.dropped {
			placed += r.cycles
		}
	}
	return all, placed
}

// emit reads the log again and hands every cycle of a run placed in time to fn, with its
// time, in file order.
func (l *gcLog) emit(fn func(t time.Time, c gctrace.Cycle, run *gcRun, first bool)) error {
	i := -1
	var cur *gcRun
	prevN, prevAt := 0, time.Duration(0)
	return l.each(func(_ time.Time, c gctrace.Cycle) {
		first := cur == nil || c.N <= prevN || c.At < prevAt
		if first {
			i++
			if i >= len(l.runs) {
				cur = nil
				return
			}
			cur = l.runs[i]
		}
		prevN, prevAt = c.N, c.At
		if cur == nil || cur.dropped {
			return
		}
		t := cur.place(c)
		if first {
			cur.first = t
		}
		fn(t, c, cur, first)
	})
}

// each calls fn for every gc cycle line of the log, with the time the log gives it.
func (l *gcLog) each(fn func(t time.Time, c gctrace.Cycle)) error {
	f, err := infile.Open(l.path, 0) // a regular file still, never waiting on a pipe
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if l.gzipped {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		r = zr
	}
	lr := &io.LimitedReader{R: r, N: maxLogBytes}
	br := bufio.NewReaderSize(lr, maxLogLine+1)
	l.skipped = 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // too long: not a gc line
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			ll := splitLogLine(line)
			c, ok, perr := gctrace.ParseLine(string(ll.text))
			switch {
			case ok:
				fn(ll.t, c)
			case perr != nil:
				l.skipped++
			}
		}
		if err == io.EOF {
			l.cut = lr.N <= 0
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
	}
}
