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
// The goroutine profile and its text are left out while the target's stacks are unchanged as
// far as matters (stacksUnchanged): the same goroutine count (read every sample, or the target
// idle), the last profile younger than the leak check's period; in the last round of a
// recording (final) too, whatever the last profile's age: the recording then ends with the
// stacks the last profile saw (a 2-minute watch would otherwise read them twice at its end). With an agent they are
// fetched every round, as before. A service also read from its memory (readMemoryToo) gives
// its heap profile from there, its figures every sample (no MemStats), and its stacks from
// there when the stop is within the bound (no text then). Requests go one at a time (asked).
func (r *recorder) snapshot(ctx context.Context, c *scrape.Client, withText, final bool) {
	now := time.Now()
	asked, answered := false, false // did memdoctor ask the service anything; did it answer any request, even with something unusable?
	refused := false                // did the service refuse a connection (its port closed)?
	tried := func(kind string, err error) {
		if err != nil && ctx.Err() != nil {
			return // stopped by memdoctor, not failed by the service
		}
		r.tries.add(kind, err)
		asked = true
		answered = answered || !noAnswer(err)
		refused = refused || errors.Is(err, scrape.ErrUnreachable)
	}
	defer func() {
		if asked && !stopping(ctx) { // a round cut short by the end of the recording is no failure
			r.roundDone(answered, refused)
		}
	}()
	ms := r.memory()
	goroutines := 0 // this round's count, for its MemStats sample: whether the index is readable or not
	pid, _ := r.target()
	ranBefore := r.ranNow(pid)
	r.mu.Lock()
	every := r.cfg.LeakCheckEvery
	if final && !r.stacks.at.IsZero() {
		every = now.Sub(r.stacks.at) + time.Second // the age does not matter at the end
	}
	quiet := stacksUnchanged(r.stacks, r.goroutines, r.counted(now), ranBefore, now, every)
	if quiet {
		goroutines = r.goroutines
	}
	count := r.goroutines
	r.mu.Unlock()
	var (
		raw []byte
		p   *profile.Profile
		err error
	)
	if count <= 0 && ms != nil && !quiet { // the first round may come before the first sample
		ms.mu.Lock()
		count, _ = ms.rd.Goroutines()
		ms.mu.Unlock()
	}
	if ms == nil && !quiet && count >= manyStacks {
		ms = r.readCrowded(count) // a program memdoctor runs: its stacks from its memory
	}
	fromMemory := !quiet && r.stacksFromMemory(ms, count)
	sampled := !quiet && !fromMemory && r.sampleStacks(ms, count)
	switch {
	case quiet: // an idle target's stacks stay as the last profile saw them
	case fromMemory:
		var stop time.Duration
		if p, stop = r.memGoroutines(ms, now, "interval"); p == nil {
			err = errors.New("no goroutine profile from memory")
		}
		r.stopped(ms, count, stop)
	case sampled:
		if p = r.memSampleGoroutines(ms, now, "interval"); p == nil {
			err = errors.New("no goroutine profile from memory")
		}
	default:
		err = r.asked(ctx, session.AttemptGoroutine, func() (err error) {
			raw, p, err = c.Goroutine(ctx)
			return err
		})
		tried(session.AttemptGoroutine, err)
		if err != nil && !stopping(ctx) && unanswered(err) {
			r.pprofStarved(ms, err)
		}
	}
	fromMemory = fromMemory || sampled
	switch {
	case quiet:
	case err != nil:
		if !fromMemory {
			r.scrapeFailed("goroutine", err)
		}
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
		if !fromMemory {
			r.store(session.KindGoroutine, now, raw)
		}
	}
	if withText && !quiet && !fromMemory {
		err := r.asked(ctx, session.AttemptGoroutineText, func() error { return r.storeGoroutineText(ctx, c, now) })
		tried(session.AttemptGoroutineText, err)
	}
	if ms != nil {
		r.memHeap(ms, now)
	} else {
		err = r.asked(ctx, session.AttemptHeap, func() (err error) {
			raw, _, err = c.Heap(ctx)
			return err
		})
		tried(session.AttemptHeap, err)
		if err != nil {
			r.scrapeFailed("heap", err)
			if !stopping(ctx) && unanswered(err) {
				r.pprofStarved(ms, err)
			}
		} else {
			r.store(session.KindHeap, now, raw)
		}
	}
	if r.agent != nil {
		return // the agent's runtime/metrics samples are exact: no MemStats (it stops the world)
	}
	if ms != nil { // the figures are read from memory every sample
		r.mu.Lock()
		if !quiet && p != nil {
			r.stacks = stacksState{at: now, goroutines: goroutines, ran: r.ranNow(pid)}
		}
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	r.memStats.last = time.Now()
	r.mu.Unlock()
	var mst scrape.MemStats
	err = r.asked(ctx, session.DataFigures, func() (err error) {
		mst, err = c.MemStats(ctx)
		return err
	})
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
		g := goMemFromMemStats(mst, goroutines)
		r.status.HeapBytes = mst.HeapAlloc
		r.gcCountRead(uint64(mst.NumGC), mst.HeapAlloc, time.Now())
		r.mu.Unlock()
		r.setGoHeap(mst.HeapInuse)
		if err := r.w.AppendSample(session.Sample{Time: time.Now().UTC(), Go: g}); err != nil {
			r.writeFailed(err)
		}
	}
}

// pprofStarved hands the stacks of a service read from its memory to its memory once its
// pprof left a goroutine profile unanswered (err): read without stopping it from then on. A
// program memdoctor runs is read from its memory from then on (it is surely the service: its
// own child), for its figures and heap profiles too.
func (r *recorder) pprofStarved(ms *memSource, err error) {
	if errors.Is(err, errNotAsked) {
		return // memdoctor's own request waited for another: the one in flight says
	}
	r.starving.Lock() // the sample and profile loops both call it
	defer r.starving.Unlock()
	if ms == nil {
		ms = r.memory() // opened since the round began
	}
	if ms == nil {
		ms = r.readStarved(err)
	}
	if ms == nil || !ms.besidePprof || ms.pprofStarved {
		return
	}
	ms.pprofStarved = true
	r.addNote("the service's pprof left a request unanswered (%v): its goroutines' stacks are read from its memory without stopping it from then on", err)
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
// answers with something unusable is not gone: its failures are counted in the attempts; nor
// is one whose memory is read and whose port still accepts (refused: it did not).
func (r *recorder) roundDone(anyOK, refused bool) {
	r.mu.Lock()
	if anyOK {
		r.failedRounds = 0
	} else {
		r.failedRounds++
	}
	n := r.failedRounds
	// A service read from its memory is there as long as its process is (its exit ends the
	// watch through gone): a pprof that answers nothing is starved or stuck, not gone.
	alive := r.mem != nil
	r.mu.Unlock()
	if n >= unreachableRounds && (!alive || refused) {
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
		LastGCUnixNano:    ms.LastGC,
		Goroutines:        goroutines,
	}
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
