package agent

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// gcHook signals once per GC cycle, at no cost between cycles: an unreachable sentinel object
// carries a cleanup, which the runtime runs after the GC that finds it dead; the cleanup arms
// a new sentinel for the next cycle and pokes a channel without blocking. Cycles that end
// while the agent is busy coalesce into one signal (the GC count tells how many there were).
type gcHook struct {
	c       chan struct{}
	stopped atomic.Bool
}

// gcSentinel has a pointer so that it is never batched with other objects by the tiny
// allocator (whose blocks die together).
type gcSentinel struct {
	_ *byte
	_ [8]byte
}

func startGCHook() *gcHook {
	h := &gcHook{c: make(chan struct{}, 1)}
	h.arm()
	return h
}

func (h *gcHook) arm() {
	runtime.AddCleanup(new(gcSentinel), gcFired, h)
}

// gcFired runs on the runtime's cleanup goroutine: it must return at once.
func gcFired(h *gcHook) {
	if h.stopped.Load() {
		return // the last sentinel: nothing re-arms, and the hook is garbage
	}
	select {
	case h.c <- struct{}{}:
	default:
	}
	h.arm()
}

func (h *gcHook) stop() { h.stopped.Store(true) }

// gcReader reads the heap at the end of the last GC: three metrics, one metrics.Read into a
// slice allocated once.
type gcReader struct {
	samples [3]metrics.Sample
}

func newGCReader() *gcReader {
	r := &gcReader{}
	r.samples[0].Name = mHeapLive
	r.samples[1].Name = mHeapGoal
	r.samples[2].Name = mCycles
	return r
}

func (r *gcReader) read(t time.Time) gcPoint {
	metrics.Read(r.samples[:])
	u := func(i int) uint64 {
		if r.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // absent from this Go version
		}
		return r.samples[i].Value.Uint64()
	}
	return gcPoint{t: t, live: u(0), goal: u(1), cycle: u(2)}
}
