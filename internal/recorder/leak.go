package recorder

import (
	"context"
	"errors"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// Fetching the goroutineleak profile over pprof: at the start, when the goroutine count
// (from the index page, else the goroutine profile) has climbed 20% and 50 goroutines since
// the last fetch, and otherwise every cfg.LeakCheckEvery; never twice within leakMinGap.
// Each fetch is a full GC of the target's heap with leak detection: on a heap large enough
// that one costs more than leakCostShare of a core over LeakCheckEvery (about 125 MiB at the
// defaults), the fetches are paced by that cost, and the first waits for the goroutines to
// climb (or to be leakManyGoroutines) or for the paced period. Measured: 257 ms of CPU for
// a 256 MiB pointer heap with 11,000 goroutines (bench/scrapecost), about leakMarkRate.
const (
	leakMinGap         = 15 * time.Second
	leakClimbRatio     = 0.2
	leakClimbMin       = 50
	leakCostShare      = 0.001   // of one core, on average: a third of what watching a big idle service may cost (0.3%)
	leakMarkRate       = 1 << 30 // bytes of live heap a fetch's GC gets through per CPU-second
	leakManyGoroutines = 100000  // a pile-up by itself: services hold one per connection or request, tens of thousands at most
	// leakHeapWait: how many samples the first fetch waits for the heap's size to be read.
	leakHeapWait = 3
)

func (r *recorder) leakPolicy() leakcheck.Policy {
	return leakcheck.Policy{Every: r.cfg.LeakCheckEvery, MinGap: r.cfg.leakMinGap, ClimbRatio: leakClimbRatio, ClimbMin: leakClimbMin,
		CostShare: max(r.cfg.leakCostShare, 0), MarkRate: leakMarkRate, ManyGoroutines: leakManyGoroutines}
}

// leakState is the goroutineleak fetching's own state; only leakLoop touches it.
type leakState struct {
	last      leakcheck.State
	fetches   int
	leaked    int // goroutines the last profile held
	failures  int
	notServed bool // the target answered 404: it has no goroutineleak profile
}

// leakLoop fetches the goroutineleak profile when the policy says so, checking every
// cfg.Sample. It stays idle while no pprof endpoint is known, when an embedded agent takes
// these profiles itself (its copies reach the session), and once the target has shown that
// it does not serve the profile.
func (r *recorder) leakLoop(ctx context.Context) {
	if r.cfg.LeakCheckEvery < 0 {
		return
	}
	policy := r.leakPolicy()
	st := leakState{last: leakcheck.State{LastGoroutines: -1, Since: time.Now()}}
	defer func() { r.noteLeaks(st) }()
	t := time.NewTicker(r.cfg.Sample)
	defer t.Stop()
	for ticks := 0; ; ticks++ {
		_, c := r.target()
		r.mu.Lock()
		goroutines, served, indexRead := r.goroutineCount(), r.index.leak, r.index.reads > 0
		heap := float64(r.status.HeapBytes)
		r.mu.Unlock()
		if st.last.LastGoroutines < 0 {
			st.last.LastGoroutines = goroutines // the count was not known at the last fetch: the first since
		}
		// Wait for the first index read: it says whether the profile is served. When the index
		// cannot be read, a fetch finds out (a 404 ends the fetching). The first fetch waits a
		// few samples for the heap's size too: on a large heap it is paced.
		heapRead := heap > 0 || st.fetches > 0 || ticks >= leakHeapWait
		if c != nil && r.agent == nil && indexRead && heapRead && served != leakServedNo && !st.notServed {
			now := time.Now()
			if reason := policy.DueAt(st.last, now, goroutines, heap); reason != leakcheck.NotDue {
				r.fetchLeak(ctx, c, &st, now, goroutines, reason)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.gone:
			return
		case <-t.C:
		}
	}
}

// goroutineCount is the latest goroutine count known, -1 when none is. r.mu is held.
func (r *recorder) goroutineCount() int {
	if r.goroutines == 0 {
		return -1 // a Go program has at least one goroutine: 0 means not read yet
	}
	return r.goroutines
}

// fetchLeak fetches and stores one goroutineleak profile. A failure counts as a fetch for
// the policy: it is not retried before the policy's next turn.
func (r *recorder) fetchLeak(ctx context.Context, c *scrape.Client, st *leakState, now time.Time, goroutines int, reason leakcheck.Reason) {
	st.last = leakcheck.State{Last: now, LastGoroutines: goroutines, Since: st.last.Since}
	// Not cancelled with the loop: a fetch under way has made the target run its GC, so its
	// profile is worth keeping; the client's timeout bounds it.
	var (
		raw []byte
		p   *profile.Profile
	)
	err := r.asked(ctx, session.DataGoroutineLeak, func() (err error) {
		raw, p, err = c.GoroutineLeak(context.WithoutCancel(ctx))
		return err
	})
	if errors.Is(err, context.Canceled) {
		return // the recording ended while the fetch waited its turn (the fetch itself is not cancelled)
	}
	r.mu.Lock()
	r.index.leakFetched = true // the index's count is this fetch's: read it at the next sample
	r.mu.Unlock()
	switch {
	case errors.Is(err, scrape.ErrNotFound):
		st.notServed = true
		r.log.Info("the target does not serve the goroutineleak profile (Go 1.27, or Go 1.26 with GOEXPERIMENT=goroutineleakprofile)")
		return
	case err != nil:
		st.failures++
		r.scrapeFailed("goroutineleak", err)
		return
	}
	leaked := 0
	for _, s := range p.Sample {
		if len(s.Value) > 0 {
			leaked += int(s.Value[0])
		}
	}
	st.fetches++
	st.leaked = leaked
	r.log.Info("goroutineleak profile", "reason", string(reason), "leaked", leaked, "goroutines", goroutines)
	if _, err := r.w.WriteProfile(session.KindGoroutineLeak, now, "", raw); err != nil {
		r.writeFailed(err)
		return
	}
	r.mu.Lock()
	r.status.LeakSnapshots++
	r.mu.Unlock()
}

// noteLeaks records in the manifest that the goroutineleak fetches forced GC cycles.
func (r *recorder) noteLeaks(st leakState) {
	if st.fetches == 0 && st.failures == 0 {
		return
	}
	r.addNote("fetched the goroutineleak profile %d time(s) (%d failed); each fetch ran one forced GC cycle with leak detection in the target; the last profile held %d leaked goroutine(s)",
		st.fetches+st.failures, st.failures, st.leaked)
}
