package leaktest

import (
	"runtime"
	"runtime/metrics"
	"slices"
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
}

const (
	metricLive       = "/gc/heap/live:bytes"
	metricGoroutines = "/sched/goroutines:goroutines"
)

func newProbe(cfg *config) *probe {
	p := &probe{cfg: cfg, samples: []metrics.Sample{{Name: metricLive}, {Name: metricGoroutines}}}
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
	runtime.GC()
	runtime.GC()
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
