package leaktest

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// caller calls fn on a goroutine of its own, so that Loop keeps its time limit whatever fn
// does: a call that never returns, or goroutines left behind that take the CPU. Loop asks it
// for batches of calls and waits for each until the deadline; at the deadline it tells the
// caller to stop after the call under way, and gives that call a grace to return.
type caller struct {
	fn   func()
	req  chan int64
	ack  chan batch // buffered: a caller whose batch Loop gave up on never blocks on it
	stop atomic.Bool
	gid  atomic.Int64 // the goroutine's id, to find it in a dump
	// calls and callTime are what the batches Loop received made, and took.
	calls    int64
	callTime time.Duration
}

// batch is what one request to the caller made.
type batch struct {
	done int64         // calls that returned
	took time.Duration // the time they took
	// How the batch ended when fn did not return: a panic (its value and stack), or
	// runtime.Goexit (t.FailNow or t.SkipNow in fn).
	panicked bool
	value    any
	stack    []byte
	exited   bool
}

func newCaller(fn func()) *caller {
	c := &caller{fn: fn, req: make(chan int64), ack: make(chan batch, 1)}
	go c.serve()
	return c
}

// close ends the caller's goroutine once its batch under way, if any, is done.
func (c *caller) close() { close(c.req) }

func (c *caller) serve() {
	c.gid.Store(goroutineID())
	var b batch
	finished := false
	defer func() {
		if finished {
			return
		}
		// fn panicked or called runtime.Goexit: say so, and end.
		if p := recover(); p != nil {
			b.panicked, b.value, b.stack = true, p, debug.Stack()
		} else {
			b.exited = true
		}
		c.ack <- b
	}()
	for n := range c.req {
		b = batch{}
		start := time.Now()
		c.run(n, &b.done)
		b.took = time.Since(start)
		c.ack <- b
	}
	finished = true
}

// run calls fn n times, or until Loop says stop, counting the calls that returned. Its name
// is the boundary of fn's stacks (callsFunc).
//
//go:noinline
func (c *caller) run(n int64, done *int64) {
	for range n {
		if c.stop.Load() {
			return
		}
		c.fn()
		*done++
	}
}

// ended is how a request to the caller ended.
type ended int

const (
	returned ended = iota // every call asked for returned
	cut                   // the deadline came: the calls stopped after the call under way
	hung                  // a call had not returned a grace after the deadline
	panicked              // fn panicked, or called runtime.Goexit
)

// call asks for n calls and waits for them until the deadline. At the deadline it stops the
// calls and waits a grace for the call under way: a call that outlasts it hangs (or is slower
// than the time limit allows). It returns the calls that returned and how the request ended;
// a panic is in last.
func (c *caller) call(n int64, deadline time.Time, last *batch) (int64, ended) {
	if n <= 0 {
		return 0, returned
	}
	if !time.Now().Before(deadline) {
		return 0, cut
	}
	c.req <- n
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case b := <-c.ack:
		return c.took(b, last, returned)
	case <-t.C:
	}
	c.stop.Store(true)
	t.Reset(c.grace())
	select {
	case b := <-c.ack:
		return c.took(b, last, cut)
	case <-t.C:
		return 0, hung
	}
}

func (c *caller) took(b batch, last *batch, e ended) (int64, ended) {
	c.calls += b.done
	c.callTime += b.took
	*last = b
	if b.panicked || b.exited {
		return b.done, panicked
	}
	return b.done, e
}

// The grace a call under way at the deadline has to return: twenty times the calls' mean
// time, between minGrace and maxGrace. A call that outlasts it is hung when the grace is
// twenty times the others' (a deadlock: Loop fails), merely slow when it is maxGrace (Loop
// says so and judges what it has).
const (
	minGrace   = time.Second
	maxGrace   = 3 * time.Second
	graceCalls = 20
)

func (c *caller) grace() time.Duration {
	return min(max(c.meanCall()*graceCalls, minGrace), maxGrace)
}

// meanCall is the mean time of the calls that returned, or 0 before any did.
func (c *caller) meanCall() time.Duration {
	if c.calls == 0 {
		return 0
	}
	return c.callTime / time.Duration(c.calls)
}

// hungForSure reports whether a call that outlasted its grace took more than twenty times
// the others (or is the first, and outlasted the whole time limit): a call that will not
// return, rather than a slow one.
func (c *caller) hungForSure() bool {
	return c.calls == 0 || c.meanCall()*graceCalls <= maxGrace
}

// goroutineID is the current goroutine's id, as its stack's first line says it.
func goroutineID() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf, _ = bytes.CutPrefix(buf, []byte("goroutine "))
	if i := bytes.IndexByte(buf, ' '); i > 0 {
		buf = buf[:i]
	}
	id, _ := strconv.ParseInt(string(buf), 10, 64)
	return id
}

// others is every goroutine but the one that calls fn, Loop's own.
func (r *run) others() []goroutine {
	id := r.caller.gid.Load()
	return slices.DeleteFunc(dumpGoroutines(), func(g goroutine) bool { return g.id == id })
}

// hungMessage is the failure of a call of fn that never returned: where it waits.
func (r *run) hungMessage() string {
	var b strings.Builder
	c := r.caller
	if c.calls == 0 {
		fmt.Fprintf(&b, "leaktest: the first %s of %s has not returned within the time limit (%s): nothing judged\n", r.unit, r.of, r.cfg.timeLimit)
	} else {
		fmt.Fprintf(&b, "leaktest: a %s of %s has not returned %s after the time limit (%s), where the %d %ss before it took %s on average: it hangs; the readings before it are judged below\n",
			r.unit, r.of, c.grace().Round(time.Millisecond), r.cfg.timeLimit, c.calls, r.unit, roundDuration(c.meanCall()))
	}
	r.writeCallerStack(&b)
	fmt.Fprintf(&b, "  a %s that never returns is a deadlock, or a leak of its own (it keeps what it holds); if %s is this slow, raise TimeLimit", r.unit, r.of)
	return b.String()
}

// slowText is what a pass says of a call still running at the end: slower than the grace, and
// not many times slower than the others.
func (r *run) slowText() string {
	var b strings.Builder
	c := r.caller
	fmt.Fprintf(&b, "a %s of %s was still running %s after the time limit (the %d %ss before it took %s on average): Loop stopped waiting for it, and it still runs\n",
		r.unit, r.of, c.grace().Round(time.Millisecond), c.calls, r.unit, roundDuration(c.meanCall()))
	r.writeCallerStack(&b)
	return strings.TrimRight(b.String(), "\n")
}

// writeCallerStack says where the call of fn under way waits: the top of its goroutine's
// stack, and the program's innermost frame under it.
func (r *run) writeCallerStack(b *strings.Builder) {
	id := r.caller.gid.Load()
	for _, g := range dumpGoroutines() {
		if g.id != id || len(g.stack) == 0 {
			continue
		}
		var fr []frame
		for _, f := range g.stack {
			if f.fn == r.attr.boundary {
				break
			}
			fr = append(fr, f)
		}
		if len(fr) == 0 {
			return
		}
		fmt.Fprintf(b, "  it waits [%s] at %s\n    %s\n", g.state, fr[0].where(), fr[0])
		for _, f := range fr[1:] {
			if r.attr.mods.classify(f.fn) == classMain {
				fmt.Fprintf(b, "    under %s\n", f)
				break
			}
		}
		return
	}
}

// roundDuration keeps a duration's three or four significant digits: 201ms, 15ns, 1.24s.
func roundDuration(d time.Duration) time.Duration {
	for unit := time.Duration(1); unit < time.Hour; unit *= 10 {
		if d < 1000*unit {
			return d.Round(unit)
		}
	}
	return d.Round(time.Second)
}
