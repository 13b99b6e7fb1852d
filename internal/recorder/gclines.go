package recorder

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/gctrace"
)

// maxPending bounds the gctrace lines kept while it is not yet known whose they are.
const maxPending = 4096

// maxCycleGap and streamSlack: a line whose cycle number skips ahead of a stream's last (a
// line lost or garbled on the way, as a busy machine's pipe can split one) still continues
// that stream when it skips at most maxCycleGap cycles and implies a start within streamSlack
// of the stream's.
const (
	maxCycleGap = 64
	streamSlack = 5 * time.Second
)

// startSlack is how much earlier than the target's known start (treeWatcher) the start a
// gctrace line implies may be, and the line still be the target's. A line's implied start
// (received, less its "@Ns") is never earlier than its process's start: the runtime counts
// from its own init, prints "@Ns" cut to the millisecond, and delivery only delays. The
// known start is at most a /proc clock tick (10 ms) late; the rest covers the wall clock
// slewed by NTP (0.05% at most) over a build of a minute or two. Not a second: the go
// command relays the linker's gctrace lines when the link ends, just before it starts the
// program it built, and relayed lines imply starts up to the link's length too late (on a
// loaded machine a linker's five lines, relayed 7 ms before the program started, implied a
// start 0.67 s before it and were taken for the program's: TestRunFollowsGoRun recorded 5 of
// its 17 cycles).
const startSlack = 100 * time.Millisecond

// maxStreams bounds the gctrace streams (one per Go process of the tree) the tracker follows.
const maxStreams = 16

// traceLine is a gctrace cycle as received.
type traceLine struct {
	recv  time.Time
	line  string
	cycle gctrace.Cycle
}

// stream is the gctrace output of one process: cycles numbered 1, 2, 3, ... Its start is
// the earliest implied runtime start of its lines (time received minus "@Ns"): delivery
// delays only ever make a line look later, so the minimum is the best estimate.
type stream struct {
	start   time.Time
	lastN   int
	pending []traceLine // lines kept until the target's stream is known
}

// gcTracker attributes gctrace lines to the target process and forwards them.
//
// When memdoctor runs `go run ./cmd/server`, both the go command and the server print
// gctrace lines to the same stderr. Each process numbers its cycles from 1, so the lines
// split into streams by numbering; the target's stream is the one that started with the
// target: the latest-starting stream at the moment the target is found, or the first to
// start after it.
type gcTracker struct {
	mu          sync.Mutex
	targetStart time.Time // zero until the target is known
	streams     []*stream
	target      *stream
	pending     int
	dropped     int // lines from other processes
	lost        int // lines dropped while pending overflowed
	cycles      int
	recent      timeRing // receive times of the target's last cycles
	lastCycle   gctrace.Cycle
	emit        func(tl traceLine, base time.Time)
	// end, when set, is the recording's end: lines received later are left out (late).
	end  time.Time
	late int
}

// newGCTracker returns a tracker that calls emit with each line of the target and the
// target's time base as known then. emit runs with the tracker locked: it must not call it.
func newGCTracker(emit func(tl traceLine, base time.Time)) *gcTracker {
	return &gcTracker{emit: emit}
}

// add takes one parsed cycle line.
func (t *gcTracker) add(tl traceLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.end.IsZero() && tl.recv.After(t.end) {
		t.late++
		return
	}
	s := t.streamFor(tl)
	switch {
	case s == t.target:
		t.emitLocked(s, tl)
	case !t.targetStart.IsZero() && t.target != nil:
		t.dropped++
	case !t.targetStart.IsZero() && !s.start.Before(t.targetStart.Add(-startSlack)):
		t.target = s // the first stream to start after the target was found
		t.flushLocked()
		t.emitLocked(s, tl)
	case t.pending >= maxPending:
		t.lost++
	default:
		s.pending = append(s.pending, tl)
		t.pending++
	}
}

// streamFor finds (or starts) the stream a line continues.
func (t *gcTracker) streamFor(tl traceLine) *stream {
	implied := tl.recv.Add(-tl.cycle.At)
	var best *stream
	bestGap := 0
	if tl.cycle.N > 1 {
		// The stream this line continues: of those it can follow (its cycle just after their
		// last, or a few later if they started with it), the one whose start is nearest to
		// the start the line implies; the fewest skipped cycles break ties.
		for _, s := range t.streams {
			gap, d := tl.cycle.N-s.lastN, absDur(s.start.Sub(implied))
			if gap < 1 || gap > maxCycleGap || gap > 1 && d > streamSlack {
				continue
			}
			if best != nil {
				if bd := absDur(best.start.Sub(implied)); d > bd || d == bd && gap >= bestGap {
					continue
				}
			}
			best, bestGap = s, gap
		}
	}
	if best != nil && best == t.target && bestGap > 1 {
		t.lost += bestGap - 1
	}
	if best == nil {
		best = &stream{start: implied}
		if len(t.streams) == maxStreams {
			t.forgetOldestLocked()
		}
		t.streams = append(t.streams, best)
	}
	best.lastN = tl.cycle.N
	if implied.Before(best.start) {
		best.start = implied
	}
	return best
}

func (t *gcTracker) forgetOldestLocked() {
	for i, s := range t.streams {
		if s != t.target {
			t.pending -= len(s.pending)
			t.lost += len(s.pending)
			t.streams = append(t.streams[:i], t.streams[i+1:]...)
			return
		}
	}
}

func (t *gcTracker) emitLocked(s *stream, tl traceLine) {
	t.cycles++
	t.lastCycle = tl.cycle
	t.recent.add(tl.recv)
	t.emit(tl, s.start)
}

// flushLocked emits the target stream's pending lines and counts the others' as dropped.
func (t *gcTracker) flushLocked() {
	for _, s := range t.streams {
		for _, tl := range s.pending {
			if s == t.target {
				t.emitLocked(s, tl)
			} else {
				t.dropped++
			}
		}
		s.pending = nil
	}
	t.pending = 0
}

// setTarget names the target's start time. Of the streams seen so far, the target's is the
// latest to start (the target starts after the go command that built it), if it started no
// earlier than the target (less startSlack).
func (t *gcTracker) setTarget(start time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.targetStart = start
	t.target = nil
	for _, s := range t.streams {
		if !s.start.Before(start.Add(-startSlack)) && (t.target == nil || s.start.After(t.target.start)) {
			t.target = s
		}
	}
	if t.target != nil {
		t.flushLocked()
	}
}

// endAt ends the recording of lines at at: the session's data ends where its recording did,
// whatever the program prints while memdoctor reads its heap and stops it.
func (t *gcTracker) endAt(at time.Time) {
	t.mu.Lock()
	t.end = at
	t.mu.Unlock()
}

// gcStats is what the tracker has seen.
type gcStats struct {
	Cycles, Dropped, Lost int
	Base                  time.Time
	PerSecond             float64 // over the last 10 s
	Last                  gctrace.Cycle
}

func (t *gcTracker) stats(now time.Time) gcStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := gcStats{Cycles: t.cycles, Dropped: t.dropped, Lost: t.lost + t.pending, Last: t.lastCycle}
	if t.target != nil {
		s.Base = t.target.start
	}
	const window = 10 * time.Second
	s.PerSecond = float64(t.recent.since(now.Add(-window))) / window.Seconds()
	return s
}

// timeRing keeps the last len(ts) times.
type timeRing struct {
	ts   [256]time.Time
	next int
}

func (r *timeRing) add(t time.Time) {
	r.ts[r.next] = t
	r.next = (r.next + 1) % len(r.ts)
}

// since counts the kept times after t.
func (r *timeRing) since(t time.Time) int {
	n := 0
	for _, x := range r.ts {
		if x.After(t) {
			n++
		}
	}
	return n
}

// splitStderr copies the program's stderr to out, except runtime trace lines: gc cycles go to
// the tracker, other trace lines (scavenger, pacer) are dropped unless showTrace is set, in
// which case every trace line is shown too. It returns when r ends.
func splitStderr(r io.Reader, out io.Writer, showTrace bool, tr *gcTracker) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			out.Write(line) // far too long for a trace line: pass it through as it comes
			continue
		}
		if len(line) > 0 {
			recv := time.Now()
			text := string(trimEOL(line))
			c, ok, perr := gctrace.ParseLine(text)
			switch {
			case ok:
				tr.add(traceLine{recv: recv, line: text, cycle: c})
				if showTrace {
					out.Write(line)
				}
			case perr == nil && gctrace.IsRuntimeTrace(text): // scavenger, pacer lines
				if showTrace {
					out.Write(line)
				}
			default: // the program's own output, including lines that only look like gc lines
				out.Write(line)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
