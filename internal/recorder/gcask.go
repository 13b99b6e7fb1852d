package recorder

import (
	"context"
	"errors"
	"time"

	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
	"github.com/memdoctor/memdoctor/units"
)

// Look is what a look at the session so far says (Config.Settled: watch --until-confirmed).
type Look struct {
	// Done: the watch may end; Why says so in a line.
	Done bool
	Why  string
	// AwaitsGC names a verdict that a reading of the live heap now would settle ("" = none: a
	// heap leak suspected, or not judged yet while the heap climbs; a burst no GC was seen
	// after). The watch then asks the service for a GC (askGC).
	AwaitsGC string
}

// DefaultRequestGC is the default of Config.RequestGC: the CPU one GC asked of the service may
// cost it, about a 100 MiB live heap at gcMarkRate.
const DefaultRequestGC = 100 * time.Millisecond

// gcMarkRate is the live heap a GC gets through per CPU-second: the rate the goroutineleak
// fetches are paced by (leakMarkRate), measured on a 256 MiB heap of pointers (bench/scrapecost).
const gcMarkRate = leakMarkRate

// gcAsks is what the GCs asked of the service went through; r.mu guards it.
type gcAsks struct {
	last            time.Time // the last one asked
	done            time.Time // when the last one was answered: the GC count moves with it
	made, failed    int
	overBudget      int    // looks that would have asked one of a heap whose GC costs more than the budget
	overBudgetHeap  uint64 // the largest such heap
	ownGC, noPprof  int    // looks that did not ask: the service's own GC had just run; no pprof to ask
	firstWhy        string // the verdict the first one was asked for
	overBudgetNoted bool
}

// gcCountRead records a reading of the target's GC count (and of its live heap, or an upper
// bound of it: 0 when not read) taken at now. r.mu is held. The first reading of a process's
// count is not a GC seen to run: its last cycle ran before memdoctor attached, up to a whole GC
// period earlier (counted as one that had just run, it kept the first GC asked at attach from
// being asked for an interval).
func (r *recorder) gcCountRead(cycles, live uint64, now time.Time) {
	if r.gcCountSeen && cycles != r.lastGCCycles {
		r.gcMovedAt = now
	}
	r.lastGCCycles, r.gcCountSeen = cycles, true
	if live > 0 {
		r.liveHeap = live
	}
}

// askGC asks the service for one GC, through its pprof's heap profile with gc=1, when a look
// found a verdict that a reading of the live heap now would settle (why, Look.AwaitsGC). The
// service's own GC reads its live heap only when it runs, seconds or minutes apart on a heap
// that grows slowly; each GC asked makes one reading now (the runtime's figures read after it,
// and the heap profile it answers with, are of that cycle). Bounded: at most one per Interval;
// none when the service's own GC ran within the last Interval (its reading is as fresh); none
// on a live heap whose GC would cost it more than Config.RequestGC of CPU (at gcMarkRate);
// never without pprof (a service read from its memory alone waits on its own GC). Each one is
// in the session's costs (session.DataHeapAfterGC) and counted in a note at the end. It
// reports whether it asked for one (and got it).
func (r *recorder) askGC(ctx context.Context, why string, now time.Time) (asked bool) {
	if why == "" || r.cfg.RequestGC <= 0 {
		return false
	}
	_, c := r.target()
	r.mu.Lock()
	a := &r.asks
	recent := now.Sub(a.last) < r.cfg.Interval-r.cfg.Sample/2
	// The service's own GC ran within the last interval: the count moved after the reading
	// that followed the last GC asked (within two samples of its answer).
	own := !r.gcMovedAt.IsZero() && now.Sub(r.gcMovedAt) < r.cfg.Interval && r.gcMovedAt.After(a.done.Add(2*r.cfg.Sample))
	live := r.liveHeap
	cost := time.Duration(float64(live) / gcMarkRate * float64(time.Second))
	switch {
	case recent:
		r.mu.Unlock()
		return false
	case c == nil:
		a.noPprof++
		r.mu.Unlock()
		return false
	case own:
		a.ownGC++
		r.mu.Unlock()
		return false
	case cost > r.cfg.RequestGC:
		a.overBudget++
		a.overBudgetHeap = max(a.overBudgetHeap, live)
		first := !a.overBudgetNoted
		a.overBudgetNoted = true
		r.mu.Unlock()
		if first {
			r.log.Info("a reading of the live heap now would settle a verdict, but a GC of this heap would cost the service more than --request-gc allows: waiting on its own GC",
				"verdict", why, "live_heap", live, "estimated_cpu", cost.Round(time.Millisecond), "budget", r.cfg.RequestGC)
		}
		return false
	}
	a.last = now
	if a.firstWhy == "" {
		a.firstWhy = why
	}
	r.mu.Unlock()
	var raw []byte
	err := r.asked(ctx, session.DataHeapAfterGC, func() (err error) {
		raw, _, err = c.HeapAfterGC(ctx)
		return err
	})
	if errors.Is(err, errNotAsked) {
		r.mu.Lock()
		a.last = time.Time{} // not asked: the next look may
		r.mu.Unlock()
		return false
	}
	r.tries.add(session.AttemptHeap, err)
	r.mu.Lock()
	a.done = time.Now()
	if err != nil {
		a.failed++
	} else {
		a.made++
		r.memStats.last = time.Time{} // its reading is due at the sample taken for it (sampleNow)
	}
	r.mu.Unlock()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			r.log.Warn("asking the service for a GC failed", "err", err)
		}
		if errors.Is(err, scrape.ErrNotFound) {
			r.mu.Lock()
			r.cfg.RequestGC = 0 // it serves no heap profile: never again
			r.mu.Unlock()
		}
		return false
	}
	r.log.Info("asked the service for a GC to read its live heap now", "verdict", why)
	r.store(session.KindHeap, now, raw)
	return true
}

// noteGCAsks says in the manifest what GCs memdoctor asked of the service, and what it did
// not ask for its cost.
func (r *recorder) noteGCAsks() {
	r.mu.Lock()
	a := r.asks
	r.mu.Unlock()
	if n := a.made + a.failed; n > 0 {
		r.addNote("asked the service for %d GC(s) through its pprof (heap?gc=1; %d failed) to read its live heap at once, while a verdict waited on a reading of it (first: %s); "+
			"at most one per --interval, none when its own GC had just run, none on a live heap whose GC would cost it more than %s of CPU (--request-gc)",
			n, a.failed, a.firstWhy, r.cfg.RequestGC)
	}
	if a.noPprof > 0 {
		r.addNote("%d look(s) found a verdict waiting on a reading of the live heap, which the service's own GC makes when it runs: with no pprof to ask a GC of, the verdict waited on it",
			a.noPprof)
	}
	if a.overBudget > 0 {
		r.addNote("%d look(s) found a verdict waiting on a reading of the live heap but asked for no GC: a GC of its live heap (up to %s) would cost the service more than %s of CPU (--request-gc); the verdict waited on its own GC",
			a.overBudget, units.Bytes(float64(a.overBudgetHeap)), r.cfg.RequestGC)
	}
}
