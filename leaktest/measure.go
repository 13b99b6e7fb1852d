package leaktest

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"time"
)

// reading is what a round ends with, after a full garbage collection.
type reading struct {
	calls      int64   // calls of fn so far, warm-up left out
	heap       float64 // live heap, bytes (less what IgnoreSites leaves out)
	goroutines float64 // goroutines (less what IgnoreTopFunction leaves out)
}

// probe takes the readings. It allocates what it keeps once, so that its own memory does not
// grow from round to round: a growth of the heap is fn's.
type probe struct {
	cfg     *config
	samples []metrics.Sample
	// ignored caches, per allocation stack, whether the heap's reading leaves it out: the
	// runtime's record of each goroutine (runtime.malg), and what IgnoreSites names.
	ignored map[[32]uintptr]bool
	recs    []runtime.MemProfileRecord
	stacks  []byte // goroutine dumps, for IgnoreTopFunction
	gauge   gauge
	// collect says whether a reading collects the garbage first (not when goroutines that
	// never block make each collection slow: the heap is not judged then).
	collect bool
}

const (
	metricLive       = "/gc/heap/live:bytes"
	metricGoroutines = "/sched/goroutines:goroutines"
)

func newProbe(cfg *config) *probe {
	p := &probe{cfg: cfg, samples: []metrics.Sample{{Name: metricLive}, {Name: metricGoroutines}}, gauge: newGauge(), collect: true}
	if cfg.heap {
		p.ignored = make(map[[32]uintptr]bool, 1024)
	}
	if len(cfg.ignoreTop) > 0 {
		p.stacks = make([]byte, 1<<20)
	}
	return p
}

// read collects the garbage and reads the live heap and the goroutines. It collects twice:
// what a sync.Pool holds survives one collection (its victim cache) and is dropped by the
// next; a pool filled during the round (net/http's buffers, a server's, a request's) would
// read as a growth as noisy as the round's concurrency, and as lasting as the rounds.
func (p *probe) read(calls int64) reading {
	if p.collect {
		runtime.GC()
		runtime.GC()
	}
	metrics.Read(p.samples)
	r := reading{calls: calls}
	if s := p.samples[0]; s.Value.Kind() == metrics.KindUint64 {
		r.heap = float64(s.Value.Uint64())
	}
	if s := p.samples[1]; s.Value.Kind() == metrics.KindUint64 {
		r.goroutines = float64(s.Value.Uint64())
	}
	if p.ignored != nil {
		r.heap -= p.ignoredBytes()
	}
	if len(p.cfg.ignoreTop) > 0 {
		r.goroutines = float64(p.countGoroutines())
	}
	return r
}

// ignoredBytes is the heap profile's in-use bytes that the heap's reading leaves out: those
// allocated under the functions IgnoreSites names, and what the runtime keeps at the most it
// ever needed (runtimeKept: each goroutine's record and the list of them, the heaps of
// pending timers). The runtime never frees those, and reuses them: they grow to the most
// goroutines (or timers) ever alive at once, a peak that a loaded machine raises now and then,
// which would read as a slow leak; a goroutine leak is counted as goroutines. With every
// allocation sampled (MemProfileRate 1), the profile's bytes are the heap's.
func (p *probe) ignoredBytes() float64 {
	n, ok := runtime.MemProfile(p.recs, false)
	for !ok {
		p.recs = make([]runtime.MemProfileRecord, n+n/4+64)
		n, ok = runtime.MemProfile(p.recs, false)
	}
	var sum float64
	for _, r := range p.recs[:n] {
		ign, seen := p.ignored[r.Stack0]
		if !seen {
			ign = stackHolds(r.Stack(), p.cfg.ignoreSites) || stackHolds(r.Stack(), runtimeKept) || ownAllocation(r.Stack())
			p.ignored[r.Stack0] = ign
		}
		if ign {
			sum += float64(r.InUseBytes())
		}
	}
	return sum
}

// ownAllocation reports whether Loop itself made an allocation: its stack reaches a frame of
// this package's own files before the function that calls fn (or runs a test). Loop's
// buffers grow now and then (the records of the heap profile it reads each round, as new
// stacks appear), a step that must not read as fn's growth.
func ownAllocation(stk []uintptr) bool {
	frames := runtime.CallersFrames(stk)
	for {
		f, more := frames.Next()
		switch {
		case f.Function == callsFunc || f.Function == testBoundary:
			return false // fn's, or the test's
		case isOwnFile(f.File):
			return true
		}
		if !more {
			return false
		}
	}
}

// runtimeKept are the runtime's functions that allocate what it keeps at the most it ever
// needed at once and never gives back: a new goroutine's record, the list of them all, and a
// P's heap of pending timers.
var runtimeKept = []string{"runtime.malg", "runtime.allgadd", "runtime.(*timers).addHeap"}

// stackHolds reports whether a frame of the stack is one of the functions.
func stackHolds(stk []uintptr, functions []string) bool {
	frames := runtime.CallersFrames(stk)
	for {
		f, more := frames.Next()
		if slices.Contains(functions, f.Function) {
			return true
		}
		if !more {
			return false
		}
	}
}

// countGoroutines counts the goroutines whose top function IgnoreTopFunction does not name.
func (p *probe) countGoroutines() int {
	defer unprofiled()()
	for {
		n := runtime.Stack(p.stacks, true)
		if n < len(p.stacks) {
			return countNotIgnored(p.stacks[:n], p.cfg.ignoreTop)
		}
		p.stacks = make([]byte, 2*len(p.stacks))
	}
}

// gauge counts the goroutines that are busy: running, runnable, or in a system call or cgo.
// Goroutines a call left that never block (a loop with a zero period) take the CPU from
// everything else, Loop included (each garbage collection waits its turn behind them), and
// may never end: Loop lets each round add one of them at most, and waits a bounded time for
// them to end before a reading.
type gauge struct {
	samples []metrics.Sample
	// byState says whether the runtime counts the goroutines by state (Go 1.26 on); before,
	// busy counts them in a dump.
	byState bool
}

func newGauge() gauge {
	g := gauge{samples: []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/sched/goroutines/not-in-go:goroutines"},
	}}
	metrics.Read(g.samples)
	g.byState = true
	for _, s := range g.samples {
		g.byState = g.byState && s.Value.Kind() == metrics.KindUint64
	}
	return g
}

// busyNow is how many goroutines are busy now, the runtime's own included, from the runtime's
// counts; false where it has none (before Go 1.26).
func (g *gauge) busyNow() (int, bool) {
	if !g.byState {
		return 0, false
	}
	metrics.Read(g.samples)
	n := 0
	for _, s := range g.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			n += int(s.Value.Uint64())
		}
	}
	return n, true
}

// spinners counts the goroutines that never block: running or ready to run in two dumps
// between which the process ran (spent spinCPU of CPU at least, waiting up to spinWait for it):
// a goroutine just started is ready to run for a moment, and one that a machine starved of CPU
// did not run stays so. Loop's own are left out. It looks only when the runtime counts more
// busy goroutines than Loop's own and busyNoise (its own, which come and go), or cannot count
// them: a dump of tens of thousands of goroutines blocked for good costs a tenth of a second.
// It returns false when it cannot tell: the machine did not run the process for spinWait.
func (r *run) spinners() (int, bool) {
	if n, ok := r.probe.gauge.busyNow(); ok && n <= 1+busyNoise {
		return 0, true
	}
	first := r.runningIDs()
	if len(first) == 0 {
		return 0, true
	}
	t0, c0 := time.Now(), cpuNow()
	for {
		time.Sleep(time.Millisecond)
		c1 := cpuNow()
		if c0 < 0 || c1 < 0 || c1-c0 >= spinCPU {
			break
		}
		if time.Since(t0) >= spinWait {
			return 0, false
		}
	}
	n := 0
	for id := range r.runningIDs() {
		if first[id] {
			n++
		}
	}
	return n, true
}

// burn is the CPU the process spends, in cores, over burnWindow on the clock while Loop waits:
// what the goroutines left take (goroutines that never block, or wake often: a ticker each),
// or -1 where the process's CPU time cannot be read. After a garbage collection, an idle test
// process spends 0.01 to 0.05 cores over 20 ms (up to 0.3 over 5 ms).
func (r *run) burn() float64 {
	t0, c0 := time.Now(), cpuNow()
	time.Sleep(burnWindow)
	c1 := cpuNow()
	if c0 < 0 || c1 < 0 {
		return -1
	}
	return float64(c1-c0) / float64(time.Since(t0))
}

// burnWindow is the time over which burn measures.
const burnWindow = 20 * time.Millisecond

// The CPU the process spends between spinners' dumps, and the longest it waits for it.
const spinCPU, spinWait = 5 * time.Millisecond, 200 * time.Millisecond

// runningIDs is the goroutines of a dump that run or are ready to, Loop's own left out.
func (r *run) runningIDs() map[int64]bool {
	ids := map[int64]bool{}
	for _, g := range r.others() {
		if runningState(g.state) && g.id != r.loopID {
			ids[g.id] = true
		}
	}
	return ids
}

// How settle waits. The goroutine count is polled every pollMin to pollMax (an eighth of the
// time waited so far). It has settled when it has not changed over quietPolls polls in a
// row and for minQuiet, or for half the time waited if more (goroutines that end one after
// another over a while are waited for; a process the machine did not run for a while polls
// again before it believes the count), while no more goroutines are busy than before the
// calls (busyNoise more: the runtime's own come and go). While more are busy, it waits until
// the process has spent busyRounds rounds' time of CPU at most: they may never end (a leak
// that spins), and a machine starved of CPU must not end the wait for goroutines that merely
// wait for one. settle waits settleRounds rounds' time of CPU at most in all, and settleWall
// on the clock.
const (
	pollMin, pollMax = 100 * time.Microsecond, 5 * time.Millisecond
	minQuiet         = 2 * time.Millisecond
	quietPolls       = 3
	busyNoise        = 2
	busyRounds       = 5
	settleRounds     = 50
	settleWall       = 2 * time.Second
)

// settle waits for the goroutines fn's calls left that end on their own (a fan-out's
// workers, the functions of timers, work handed to goroutines) to end, so that a reading
// counts those that stay rather than a moment of those in flight, and a round's time is
// what its calls cost in all. busy0 is the busy goroutines before the calls (where the runtime
// counts them: before Go 1.26, settle waits for the count alone); settle returns by until at
// the latest. It returns when it last saw the count change, and the process's CPU time then
// (-1 where it cannot be read): the end of the calls' work, its quiet wait after left out.
func (r *run) settle(busy0 int, until time.Time) (time.Time, time.Duration) {
	start, cpu0 := time.Now(), cpuNow()
	spent := func(c time.Duration) time.Duration { // the process's CPU time since start, else the clock's
		if c >= 0 && cpu0 >= 0 {
			return c - cpu0
		}
		return time.Since(start)
	}
	until = minTime(until, start.Add(settleWall))
	last, changed, cpuChanged, quiet := runtime.NumGoroutine(), start, cpu0, 0
	for {
		now, cpu := time.Now(), cpuNow()
		waited := now.Sub(start)
		if !now.Before(until) || spent(cpu) >= settleRounds*r.cfg.roundTime {
			return changed, cpuChanged
		}
		if quiet >= quietPolls && now.Sub(changed) >= max(minQuiet, waited/2) {
			if n, ok := r.probe.gauge.busyNow(); !ok || n <= busy0+busyNoise || spent(cpu) >= busyRounds*r.cfg.roundTime {
				return changed, cpuChanged
			}
		}
		time.Sleep(min(max(waited/8, pollMin), pollMax, until.Sub(now)))
		if n := runtime.NumGoroutine(); n != last {
			last, changed, cpuChanged, quiet = n, time.Now(), cpuNow(), 0
		} else {
			quiet++
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
