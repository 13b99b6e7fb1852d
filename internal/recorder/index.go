package recorder

import (
	"context"
	"errors"
	"time"

	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// indexState is what the per-sample reads of the pprof index page have learnt. Guarded by
// recorder.mu.
type indexState struct {
	reads, failures int
	lastErr         error
	// unanswered counts the reads in a row the service did not answer in time.
	unanswered int
	// leak says whether the target serves the goroutineleak profile, as far as known.
	leak leakServed
	// leakFetched says that a goroutineleak profile was fetched since the page was last read
	// (the page's goroutineleak count is that fetch's).
	leakFetched bool
}

type leakServed int

const (
	leakUnknown leakServed = iota
	leakServedYes
	leakServedNo
)

// maxIndexTimeout bounds one index read: it is polled every sample, and a slow target must
// not delay the /proc samples nor pile requests up.
const maxIndexTimeout = time.Second

// readIndex reads the counts of the pprof index page once, when a pprof endpoint is known:
// one request, no retry, within half the sample interval (at most a second). It returns nil
// when there is no endpoint, the read failed (that sample has no counts) or the page is not
// due (indexDue).
func (r *recorder) readIndex() *session.PprofCounts {
	_, c := r.target()
	if c == nil || !r.indexDue() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(r.cfg.Sample/2, maxIndexTimeout))
	defer cancel()
	var ix scrape.Index
	err := r.asked(ctx, session.DataIndex, func() (err error) {
		ix, err = c.Index(ctx)
		return err
	})
	if errors.Is(err, errNotAsked) {
		return nil // a long request was in flight (a goroutineleak fetch): no counts this sample
	}
	var starved error
	defer func() {
		if starved != nil { // after r.mu is released
			r.pprofStarved(nil, starved)
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index.reads++
	r.index.leakFetched = false
	if err != nil && unanswered(err) {
		if r.index.unanswered++; r.index.unanswered == starvedIndexReads {
			starved = err
		}
	} else {
		r.index.unanswered = 0
	}
	if err != nil {
		r.index.failures++
		r.index.lastErr = err
		if r.index.failures == 1 {
			r.log.Warn("reading the pprof index failed; that sample has no goroutine count", "err", err)
		} else {
			r.log.Debug("reading the pprof index failed", "err", err)
		}
		return nil
	}
	pc := countsFromIndex(ix)
	r.goroutines, r.countedAt = pc.Goroutines, time.Now()
	if pc.GoroutineLeak < 0 {
		r.index.leak = leakServedNo
	} else {
		r.index.leak = leakServedYes
	}
	return pc
}

// starvedIndexReads is how many index reads in a row the service may leave unanswered (each
// within half a sample) before its pprof counts as starved (pprofStarved).
const starvedIndexReads = 3

// indexDue reports whether the index page is read at this sample: at every sample, but when
// the goroutine count is read from the service's memory beside its pprof, which gives it for
// nothing; then at the first sample and the first after each goroutineleak fetch (the page's
// goroutineleak count, the count of the last leak check, changes with nothing else). An idle
// service is then asked nothing between its first snapshot and its next leak check: even a
// request as cheap as the index page wakes its scheduler.
func (r *recorder) indexDue() bool {
	ms := r.memory()
	r.mu.Lock()
	defer r.mu.Unlock()
	return ms == nil || !ms.besidePprof || r.index.reads == 0 || r.index.leakFetched
}

// countsFromIndex picks the counts a session keeps from an index page.
func countsFromIndex(ix scrape.Index) *session.PprofCounts {
	pc := &session.PprofCounts{
		Goroutines:  ix["goroutine"],
		Threads:     ix["threadcreate"],
		HeapRecords: ix["heap"],
	}
	if n, ok := ix["goroutineleak"]; ok {
		pc.GoroutineLeak = n
	} else {
		pc.GoroutineLeak = -1
	}
	return pc
}

// noteIndex records in the manifest how the index reads went, when some failed.
func (r *recorder) noteIndex() {
	r.mu.Lock()
	st := r.index
	r.mu.Unlock()
	if st.failures > 0 {
		r.addNote("the pprof index page (per-second goroutine counts) could not be read %d time(s) out of %d; the last error: %v", st.failures, st.reads, st.lastErr)
	}
}
