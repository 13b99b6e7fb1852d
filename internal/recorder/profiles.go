package recorder

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// snapshot takes one round of profiles: goroutine (proto, and text when withText), heap
// (proto) and the MemStats block. Each request fails on its own: the others still run.
//
// Between the first and a final round (final), the goroutine profile and its text are left
// out while the target's stacks are unchanged (stacksUnchanged): idle, the same goroutines.
func (r *recorder) snapshot(ctx context.Context, c *scrape.Client, withText, final bool) {
	now := time.Now()
	answered := false // did the service answer any request, even with something unusable?
	tried := func(kind string, err error) {
		if err != nil && ctx.Err() != nil {
			return // stopped by memdoctor, not failed by the service
		}
		r.tries.add(kind, err)
		answered = answered || !noAnswer(err)
	}
	defer func() {
		if !stopping(ctx) { // a round cut short by the end of the recording is no failure
			r.roundDone(answered)
		}
	}()
	goroutines := 0 // this round's count, for its MemStats sample: whether the index is readable or not
	pid, _ := r.target()
	ranBefore := r.ranNow(pid)
	r.mu.Lock()
	quiet := !final && stacksUnchanged(r.stacks, r.goroutines, ranBefore, now, r.cfg.LeakCheckEvery)
	if quiet {
		goroutines = r.goroutines
	}
	r.mu.Unlock()
	var (
		raw []byte
		p   *profile.Profile
		err error
	)
	if !quiet { // an idle target's stacks stay as the last profile saw them
		raw, p, err = c.Goroutine(ctx)
		tried(session.AttemptGoroutine, err)
	}
	switch {
	case quiet:
	case err != nil:
		r.scrapeFailed("goroutine", err)
	default:
		var n int64
		for _, s := range p.Sample {
			if len(s.Value) > 0 {
				n += s.Value[0]
			}
		}
		goroutines = int(n)
		r.mu.Lock()
		r.goroutines = goroutines
		r.mu.Unlock()
		r.store(session.KindGoroutine, now, raw)
	}
	if withText && !quiet {
		tried(session.AttemptGoroutineText, r.storeGoroutineText(ctx, c, now))
	}
	raw, _, err = c.Heap(ctx)
	tried(session.AttemptHeap, err)
	if err != nil {
		r.scrapeFailed("heap", err)
	} else {
		r.store(session.KindHeap, now, raw)
	}
	if r.agent != nil {
		return // the agent's runtime/metrics samples are exact: no MemStats (it stops the world)
	}
	r.mu.Lock()
	r.memStats.last = time.Now()
	r.mu.Unlock()
	ms, err := c.MemStats(ctx)
	tried(session.AttemptMemStats, err)
	ran := r.ranNow(pid) // after this round's requests: their cost is not the target's work
	r.mu.Lock()
	r.memStats.ran = ran
	if !quiet && p != nil {
		r.stacks = stacksState{at: now, goroutines: goroutines, ran: ran}
	}
	r.mu.Unlock()
	if err != nil {
		r.scrapeFailed("heap?debug=1", err)
	} else {
		r.mu.Lock()
		g := goMemFromMemStats(ms, goroutines)
		r.status.HeapBytes = ms.HeapAlloc
		r.lastGCCycles = uint64(ms.NumGC)
		r.mu.Unlock()
		r.setGoHeap(ms.HeapInuse)
		if err := r.w.AppendSample(session.Sample{Time: time.Now().UTC(), Go: g}); err != nil {
			r.writeFailed(err)
		}
	}
}

// storeGoroutineText streams goroutine?debug=1 into the session as it arrives: a dump of
// any size (up to the body limit) costs no memory.
func (r *recorder) storeGoroutineText(ctx context.Context, c *scrape.Client, t time.Time) error {
	var pf *session.ProfileFile
	var werr error
	_, err := c.GoroutineTextTo(ctx, func() (io.Writer, error) {
		if pf != nil {
			pf.Abort() // a retry: start again
		}
		pf, werr = r.w.CreateProfile(session.KindGoroutineText, t, "")
		if werr != nil {
			pf = nil
		}
		return pf, werr
	})
	switch {
	case werr != nil:
		r.writeFailed(werr)
	case err != nil:
		if pf != nil {
			pf.Abort()
		}
		r.scrapeFailed("goroutine?debug=1", err)
	default:
		if _, err := pf.Commit(); err != nil {
			r.writeFailed(err)
		}
	}
	return err
}

func (r *recorder) store(kind string, t time.Time, raw []byte) { r.storeLabel(kind, t, "", raw) }

func (r *recorder) storeLabel(kind string, t time.Time, label string, raw []byte) {
	if _, err := r.w.WriteProfile(kind, t, label, raw); err != nil {
		r.writeFailed(err)
		return
	}
	r.mu.Lock()
	switch kind {
	case session.KindHeap:
		r.status.HeapSnapshots++
	case session.KindGoroutine:
		r.status.GoroutineSnapshots++
	}
	r.mu.Unlock()
}

// unreachableRounds is how many snapshot rounds in a row may go unanswered before the
// target counts as gone.
const unreachableRounds = 3

// noAnswer reports whether a failed request got no answer from the service at all (as
// opposed to an answer memdoctor could not use, such as an HTML login page).
func noAnswer(err error) bool {
	return errors.Is(err, scrape.ErrUnreachable) || errors.Is(err, scrape.ErrTimeout)
}

// roundDone counts snapshot rounds in which the service answered no request. A service that
// answers with something unusable is not gone: its failures are counted in the attempts.
func (r *recorder) roundDone(anyOK bool) {
	r.mu.Lock()
	if anyOK {
		r.failedRounds = 0
	} else {
		r.failedRounds++
	}
	n := r.failedRounds
	r.mu.Unlock()
	if n >= unreachableRounds {
		r.unreachableOnce.Do(func() { close(r.unreachable) })
	}
}

func (r *recorder) scrapeFailed(what string, err error) {
	if errors.Is(err, context.Canceled) { // memdoctor cancelled it: the recording is ending
		r.log.Debug("scrape cancelled at the end of the recording", "endpoint", what)
		return
	}
	r.log.Warn("scrape failed; will retry at the next snapshot", "endpoint", what, "err", err)
}

// stopping reports whether ctx was cancelled: the recording is ending.
func stopping(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// goMemFromMemStats maps the MemStats block onto the /memory/classes leaves.
func goMemFromMemStats(ms scrape.MemStats, goroutines int) *session.GoMem {
	return &session.GoMem{
		Source:            "memstats",
		HeapObjectsBytes:  ms.HeapAlloc,
		HeapUnusedBytes:   sub(ms.HeapInuse, ms.HeapAlloc),
		HeapFreeBytes:     sub(ms.HeapIdle, ms.HeapReleased),
		HeapReleasedBytes: ms.HeapReleased,
		HeapStacksBytes:   ms.StackInuse,
		OSStacksBytes:     sub(ms.StackSys, ms.StackInuse),
		MetadataBytes:     ms.MSpanSys + ms.MCacheSys + ms.GCSys,
		OtherBytes:        ms.BuckHashSys + ms.OtherSys,
		TotalBytes:        ms.Sys,
		HeapGoalBytes:     ms.NextGC,
		AllocBytesTotal:   ms.TotalAlloc,
		AllocObjectsTotal: ms.Mallocs,
		GCCycles:          uint64(ms.NumGC),
		GCForcedCycles:    uint64(ms.NumForcedGC),
		GCCPUFraction:     ms.GCCPUFraction,
		Goroutines:        goroutines,
	}
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
