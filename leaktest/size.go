package leaktest

import (
	"runtime"
	"time"
)

// How Loop sizes its rounds and bounds what they add: the calls of fn, each batch waited for
// until the goroutines it left have settled.

// size finds how many calls make a round, as testing.B sizes its loops: from one call, more
// each time by the time the last batch took, until a batch takes the round's time (the
// batches are the warm-up's first part). A batch's time runs until the goroutines its calls
// left have settled: what a call costs in all, the work it hands to goroutines included. It
// is the process's CPU time where it can be read: on a machine starved of CPU, the time a
// batch waits for one would make rounds too short (a cache that a round of 20 ms of work fills
// would take many). A batch that takes five rounds' time on the clock ends the sizing too: a
// function that waits (for the network, a timer) uses little CPU, and its rounds must not last
// seconds. So does a batch that left as many goroutines as a round may add (bound), or that
// left goroutines that never block, or that take the CPU (burn), with fewer calls for the
// warm-up then; a batch that left goroutines is at most ten times the last, and leaves
// maxRoundGoroutines at most by the last's count, so that the sizing finds out before they are
// many. It returns false when the calls must stop (r.ended says why).
func (r *run) size() (int64, bool) {
	// The first call is often the slowest (lazy initialisation): it times nothing.
	done, more := r.callSettled(1)
	r.warmup += done
	if r.haltReason() != "" {
		return 1, more
	}
	n := int64(1)
	target := r.cfg.roundTime
	for more {
		g0 := runtime.NumGoroutine()
		t0, c0 := time.Now(), cpuNow()
		done, more = r.callSettled(n)
		r.warmup += done
		// The time the calls and the goroutines they left took, settle's quiet wait left out.
		wall, cpu := r.workEnd.Sub(t0), time.Duration(-1)
		if c0 >= 0 && r.workCPU >= 0 {
			cpu = r.workCPU - c0
		}
		if cpu < 0 { // no CPU time here: the clock's alone
			cpu = wall
		}
		left := runtime.NumGoroutine() - g0
		switch {
		case left >= maxRoundGoroutines:
			return max(1, n*maxRoundGoroutines/int64(left)), more // as bound will
		case left > 0 && r.leftBusy():
			return max(1, n/int64(left)), more // a goroutine that takes the CPU per warm-up call at most
		case cpu >= target || wall >= wallRounds*target || n >= 1e9 || time.Since(r.start) >= r.cfg.timeLimit/4 || r.haltReason() != "":
			return n, more
		}
		prev := n
		n = grow(n, cpu, target)
		n = min(n, grow(prev, wall, wallRounds*target))
		n = max(min(n, 100*prev), prev+1)
		if left > 0 {
			n = min(n, 10*prev, max(prev+1, prev*maxRoundGoroutines/int64(left)))
		}
	}
	return n, false
}

// leftBusy reports goroutines left by the calls that never block or take the CPU. What they
// take is measured after a garbage collection, as the base was: the collector's own work would
// count. On a machine too starved to tell, the sizing goes on (a batch ten times the last at
// most): stopping it there made rounds of one call, in which a worker pool started lazily, a
// worker per call for its first eight, looked like a leak. So does a machine whose other work
// makes one window of burn busy: goroutines that take the CPU take it in every window, so each
// of busyWindows must be busy (CI saw the worker pool flagged so, at load 10).
func (r *run) leftBusy() bool {
	if s, sure := r.spinners(); sure && s > r.spinBase {
		return true
	}
	if r.burnBase < 0 {
		return false
	}
	if _, ok := within(r.deadline, func() bool { runtime.GC(); return true }); !ok {
		return true
	}
	for range busyWindows {
		if r.burn()-r.burnBase < minBurn {
			return false
		}
	}
	return true
}

// busyWindows is how many windows of burn in a row leftBusy wants busy.
const busyWindows = 3

// wallRounds is how many rounds' time a batch may take on the clock while it is sized.
const wallRounds = 5

// grow is the calls that would take target, by the time d that n calls took (with a fifth
// more, as testing.B predicts).
func grow(n int64, d, target time.Duration) int64 {
	if d <= 0 {
		return 100 * n
	}
	return int64(float64(n) * float64(target) * 1.2 / float64(d))
}

// The most a round may add, whatever fn leaks: a fast leak must not take the machine down
// before it is judged (a goroutine costs 2 KiB or more of stack), and goroutines that never
// block take the CPU from everything else, Loop's readings included (each garbage collection
// waits behind them: about 50 ms more per goroutine on two cores). One per round is enough
// for a verdict: every state counts. Goroutines that wake often (a ticker each) take a share
// of a core each: a round adds maxRoundBurn cores at most, once the warm-up's left minBurn.
const (
	maxRoundGoroutines = 2000
	maxRoundHeap       = 64 << 20
	maxRoundSpinning   = 1
	maxRoundBurn       = 0.05
	minBurn            = 0.1
)

// bound lowers the calls per round so that what the warm-up leaked, per call, adds no more
// than the bounds per round; spinning is how many more goroutines run (or are ready to)
// after the warm-up than before, burned how many more cores the process spends while Loop
// waits.
func (r *run) bound(n int64, before, after reading, spinning int, burned float64) int64 {
	calls := float64(r.warmup)
	if g := (after.goroutines - before.goroutines) / calls; g > 0 && float64(n)*g > maxRoundGoroutines {
		n = int64(maxRoundGoroutines / g)
	}
	if h := (after.heap - before.heap) / calls; h > 0 && float64(n)*h > maxRoundHeap {
		n = int64(maxRoundHeap / h)
	}
	if s := float64(spinning) / calls; s > 0 && float64(n)*s > maxRoundSpinning {
		n = int64(maxRoundSpinning / s)
	}
	if b := burned / calls; burned >= minBurn && float64(n)*b > maxRoundBurn {
		n = int64(maxRoundBurn / b)
	}
	return max(n, 1)
}

// callSettled makes n calls of fn on the caller's goroutine, then waits for the goroutines they
// left that end on their own to settle. It returns the calls that returned, and false when
// no more calls are to be made: the deadline came, a call hung, or fn panicked (r.ended says
// which).
func (r *run) callSettled(n int64) (int64, bool) {
	busy0, _ := r.probe.gauge.busyNow()
	done, e := r.caller.call(n, r.deadline, &r.last)
	r.ended = e
	r.workEnd, r.workCPU = time.Now(), cpuNow()
	switch e {
	case returned:
		r.workEnd, r.workCPU = r.settle(busy0, r.deadline)
	case cut:
		r.workEnd, r.workCPU = r.settle(busy0, time.Now().Add(finalSettle))
	}
	return done, e == returned
}

// finalSettle is the longest settle waits after the deadline.
const finalSettle = 500 * time.Millisecond

// spinOff turns the garbage collection of the readings off, and the heap's judgement, when
// the calls left goroutines that never block (spun of them). Each collection waits its turn
// behind them, several times over (about 50 ms more per goroutine on two cores): the readings
// count the goroutines without one.
func (r *run) spinOff(spun int, res *result) {
	if spun <= 0 {
		return
	}
	r.spun, r.probe.collect = spun, false
	res.heapOn = false
}

// slowReading is how long a reading with a garbage collection takes before Loop looks for
// goroutines that never block, which slow it down.
const slowReading = 100 * time.Millisecond
