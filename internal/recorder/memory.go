package recorder

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/agent/leakcheck"
	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/session"
)

// AttemptMemory counts the readings of the runtime's figures from the process's memory.
const AttemptMemory = "process-memory"

// DefaultMemProfileRate is the rate --enable-heap-profiling writes: the runtime's default.
const DefaultMemProfileRate = 512 * 1024

// memSource reads a local Go process's heap profile, runtime figures and goroutines from its
// memory (collect/memread), for a target that serves neither pprof nor an agent.
type memSource struct {
	mu   sync.Mutex // the reader is not safe for concurrent use
	rd   *memread.Reader
	pid  int
	leak leakcheck.State

	goroutineProfiles       int
	stopped, longest        time.Duration
	heapReads, heapSkipped  int
	heapTook, heapTookMax   time.Duration
	goroutineFails, retries int
	walkNotes               int // notes of bucket walks written to the session so far

	// The reader beside a pprof endpoint (watch of a local service, readMemoryToo): pprof
	// serves what memory cannot give or gives only with a stop longer than the bound.
	besidePprof bool
	noPauses    bool // the runtime's pause histograms cannot be read: not tried again
	// stopsOff: a stop for goroutine stacks lasted longer than the bound, so the stacks are
	// asked of pprof for the rest of the session.
	stopsOff bool
	// perGoroutine is the largest share of a stop per goroutine measured (predictStop).
	perGoroutine time.Duration
	// pprofStarved: the service's pprof left a goroutine profile unanswered, so its stacks
	// are read from its memory without stopping it from then on (sampleStacks).
	pprofStarved bool
	// besideAgent: read because the service's embedded agent starved (agentmem.go); its
	// stacks are always read without stopping it.
	besideAgent bool
	// The goroutine profiles read without stopping the process (memSampleGoroutines).
	sampled, sampleFails        int
	sampledRead, sampledOf      int
	sampledTook, sampledTookMax time.Duration
}

// maxWalkNotes bounds the notes the bucket walks add to a session (a list cut short, buckets
// left out): the first ones say it; the closing note counts them all.
const maxWalkNotes = 3

// useMemory makes rd (attached to pid) the session's source of profiles and runtime figures:
// it turns heap profiling on when it is off and the user allowed it, and notes what the
// session's profiles and figures come from. On an error rd is closed.
func (r *recorder) useMemory(rd *memread.Reader, pid int, why string) error {
	ms := &memSource{rd: rd, pid: pid, leak: leakcheck.State{LastGoroutines: -1}}
	r.addNote("%s: the heap profile, the runtime's memory statistics, GC figures and goroutine count are read from the process's memory (/proc/%d/mem) "+
		"without stopping it; goroutine profiles stop it briefly, at the start, when the goroutines climb and at the goroutine leak check's pace; no goroutine dumps (goroutine?debug=1) or goroutineleak profiles from this source", why, pid)
	rate, err := rd.MemProfileRate()
	switch {
	case err != nil:
		rd.Close()
		return err
	case rate == 0 && r.cfg.EnableHeapProfiling:
		if _, err := rd.EnableHeapProfiling(DefaultMemProfileRate); err != nil {
			rd.Close()
			return fmt.Errorf("--enable-heap-profiling: %w", err)
		}
		r.addNote("heap profiling was off in the process (runtime.MemProfileRate 0: it links no profiling); --enable-heap-profiling turned it on at %s "+
			"by writing %d into its runtime.MemProfileRate, the only write memdoctor makes to a process: the heap profiles cover the allocations made from then on",
			rd.EnabledAt().UTC().Format(time.RFC3339), DefaultMemProfileRate)
	case rate == 0:
		r.addNote("heap profiling is off in the process (runtime.MemProfileRate 0: it imports neither runtime/pprof nor net/http/pprof): its heap profiles are empty; " +
			"--enable-heap-profiling turns it on (memdoctor then writes the default rate into the process, and the profiles cover the allocations made from then on)")
	}
	r.mu.Lock()
	r.mem = ms
	r.status.Profiles = true
	r.mu.Unlock()
	return nil
}

func (r *recorder) memory() *memSource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mem
}

// sampleMemory appends one reading of the runtime's figures, every sample.
func (r *recorder) sampleMemory(now time.Time) {
	ms := r.memory()
	if ms == nil {
		return
	}
	ms.mu.Lock()
	g, err := ms.rd.Stats()
	ms.mu.Unlock()
	r.tries.add(AttemptMemory, err)
	r.memoryCost(session.DataFigures, 0)
	if err != nil {
		r.log.Debug("reading the runtime's figures from memory failed", "err", err)
		return
	}
	r.mu.Lock()
	r.goroutines, r.countedAt = g.Goroutines, time.Now()
	r.status.HeapBytes = g.HeapObjectsBytes
	r.gcCountRead(g.GCCycles, g.HeapLiveBytes, now)
	r.mu.Unlock()
	r.setGoHeap(g.HeapObjectsBytes + g.HeapUnusedBytes)
	if err := r.w.AppendSample(session.Sample{Time: now.UTC(), Go: g}); err != nil {
		r.writeFailed(err)
	}
}

// memLoop reads the heap profile every Interval and a goroutine profile when memStacksPolicy
// says so (checked every Sample), once the memory source is open; and both at the end.
func (r *recorder) memLoop(ctx context.Context) {
	tick := time.NewTicker(r.cfg.Sample)
	defer tick.Stop()
	var lastHeap time.Time
	// Goroutine profiles stop the process: they follow the leak check's policy with smaller
	// climbs (memStacksPolicy), and --leak-check-every 0 (LeakCheckEvery < 0) means never.
	policy := r.memStacksPolicy()
	for {
		if ms := r.memory(); ms != nil && !ms.besidePprof { // beside pprof, the snapshots read it
			now := time.Now()
			if now.Sub(lastHeap) >= r.cfg.Interval-r.cfg.Sample/2 { // on the sample ticks nearest the interval
				lastHeap = now
				r.memHeap(ms, now)
			}
			r.mu.Lock()
			goroutines := r.goroutineCount()
			r.mu.Unlock()
			if ms.leak.LastGoroutines < 0 {
				ms.leak.LastGoroutines = goroutines // unknown at the last profile: the first count since
			}
			if reason := policy.Due(ms.leak, now, goroutines); reason != leakcheck.NotDue {
				ms.leak = leakcheck.State{Last: now, LastGoroutines: goroutines}
				r.memStacks(ms, now, goroutines, string(reason))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.gone:
			return
		case <-tick.C:
		}
	}
}

// A goroutine profile read from memory stops the process (within maxUnaskedStop, else it is
// a sample read without stopping it): it costs the target no GC, unlike a goroutineleak fetch,
// whose climb (leakClimbMin and leakClimbRatio) it followed. The rule names a goroutine leak's
// site by comparing two of them, and needs a growth of 30 goroutines and 30% to confirm one
// (rule.Default's GoroutineLeak.Limits): a slow leak (0.55 goroutines a second, 15 -> 54 in a
// minute) never climbed 50 within a minute, so its only profile was the start's, taken before
// any leaked, and the confirmed leak named no culprit. A climb of a third of that growth
// (memStacksClimbMin and memStacksClimbRatio since the last profile, no sooner than the leak
// check's MinGap) reads the stacks about three times over the growth a confirmation needs:
// at most four stops a minute, and only while the goroutines climb.
const (
	memStacksClimbMin   = 10
	memStacksClimbRatio = 0.1
)

// memStacksPolicy is when goroutine profiles are read from the process's memory: the leak
// check's policy (the start, every LeakCheckEvery, never within its MinGap) with climbs of
// memStacksClimbMin and memStacksClimbRatio.
func (r *recorder) memStacksPolicy() leakcheck.Policy {
	p := r.leakPolicy()
	p.ClimbMin, p.ClimbRatio = memStacksClimbMin, memStacksClimbRatio
	return p
}

// memHeap stores one heap profile read from memory.
func (r *recorder) memHeap(ms *memSource, now time.Time) {
	ms.mu.Lock()
	p, hr, err := ms.rd.HeapProfile()
	ms.mu.Unlock()
	r.tries.add(session.AttemptHeap, err)
	r.memoryCost(session.AttemptHeap, 0)
	if err != nil {
		r.log.Warn("reading the heap profile from memory failed; will retry at the next snapshot", "err", err)
		return
	}
	ms.heapReads++
	ms.heapSkipped += hr.Skipped
	ms.retries += hr.Retries
	ms.heapTook += hr.Took
	ms.heapTookMax = max(ms.heapTookMax, hr.Took)
	for _, n := range hr.Notes {
		r.log.Info(n)
		if ms.walkNotes < maxWalkNotes {
			ms.walkNotes++
			r.addNote("a heap profile read from memory at %s: %s", now.UTC().Format(time.RFC3339), n)
		}
	}
	r.log.Debug("heap profile read from memory", "reading", hr.String())
	r.storeProfile(session.KindHeap, now, p)
}

// memGoroutines stores one goroutine profile, for which the process is stopped, and returns
// it with how long the process was stopped (nil on failure).
func (r *recorder) memGoroutines(ms *memSource, now time.Time, reason string) (*profile.Profile, time.Duration) {
	ms.mu.Lock()
	p, gr, err := ms.rd.GoroutineProfile()
	ms.mu.Unlock()
	var stopped time.Duration
	if gr != nil && gr.Stopped > 0 {
		stopped = gr.Stopped
		ms.stopped += gr.Stopped
		ms.longest = max(ms.longest, gr.Stopped)
	}
	r.tries.add(session.AttemptGoroutine, err)
	r.memoryCost(session.AttemptGoroutine, stopped)
	if err != nil {
		ms.goroutineFails++
		r.log.Warn("reading the goroutines' stacks failed", "err", err)
		return nil, stopped
	}
	ms.goroutineProfiles++
	r.log.Info("goroutine profile read with the process stopped", "reason", reason, "goroutines", gr.Goroutines, "stopped", gr.Stopped.Round(time.Microsecond))
	r.storeProfile(session.KindGoroutine, now, p)
	return p, stopped
}

// memStacks reads the goroutines' stacks of a process read from its memory alone: with the
// process stopped while that stop is predicted within maxUnaskedStop, else without stopping
// it (a sample past stackSample goroutines).
func (r *recorder) memStacks(ms *memSource, now time.Time, goroutines int, reason string) {
	if ms.besideAgent || goroutines > 0 && ms.predictStop(goroutines) > maxUnaskedStop {
		r.memSampleGoroutines(ms, now, reason)
		return
	}
	if p, stopped := r.memGoroutines(ms, now, reason); p != nil {
		ms.learn(goroutines, stopped)
	}
}

// memSampleGoroutines stores one goroutine profile read from the process's memory without
// stopping it (memread.GoroutineSample) and returns it (nil on failure).
func (r *recorder) memSampleGoroutines(ms *memSource, now time.Time, reason string) *profile.Profile {
	ms.mu.Lock()
	p, sr, err := ms.rd.GoroutineSample(stackSample)
	ms.mu.Unlock()
	r.tries.add(session.AttemptGoroutine, err)
	r.memoryCost(session.AttemptGoroutine, 0)
	if err != nil {
		ms.sampleFails++
		r.log.Warn("reading the goroutines' stacks without stopping the process failed", "err", err)
		return nil
	}
	ms.sampled++
	ms.sampledRead += sr.Read
	ms.sampledOf = max(ms.sampledOf, sr.Of)
	ms.sampledTook += sr.Took
	ms.sampledTookMax = max(ms.sampledTookMax, sr.Took)
	r.log.Info("goroutine profile read from memory without stopping the process", "reason", reason, "reading", sr.String())
	r.storeProfile(session.KindGoroutine, now, p)
	return p
}

// storeProfile writes a profile memdoctor built.
func (r *recorder) storeProfile(kind string, t time.Time, p *profile.Profile) {
	pf, err := r.w.CreateProfile(kind, t, "")
	if err != nil {
		r.writeFailed(err)
		return
	}
	if err := p.Write(pf); err != nil {
		pf.Abort()
		r.writeFailed(err)
		return
	}
	if _, err := pf.Commit(); err != nil {
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

// closeMemory takes the last profiles (unless aborted), notes what reading the process cost it,
// and lets it go.
func (r *recorder) closeMemory(final bool) {
	ms := r.memory()
	if ms == nil {
		return
	}
	if final && !ms.besidePprof { // beside pprof, the last snapshot took them
		now := time.Now()
		r.memHeap(ms, now)
		if r.cfg.LeakCheckEvery >= 0 {
			r.mu.Lock()
			n := r.goroutineCount()
			r.mu.Unlock()
			r.memStacks(ms, now, n, "end")
		}
	}
	if ms.heapReads > 0 {
		r.addNote("read %d heap profile(s) from the process's memory without stopping it (%s each on average, %s at most, in memdoctor; %d bucket(s) left out as unreadable or torn, %d reading(s) made again or waited for while a GC published a cycle)",
			ms.heapReads, briefly(ms.heapTook/time.Duration(ms.heapReads)), briefly(ms.heapTookMax), ms.heapSkipped, ms.retries)
	}
	if ms.sampled+ms.sampleFails > 0 {
		r.addNote("read %d goroutine profile(s) from the process's memory without stopping it (%d failed; %d goroutines read in all, of up to %d made; past %d, a sample of them spread over all, each counting for its share; running goroutines left out), %s each on average, %s at most, in memdoctor",
			ms.sampled, ms.sampleFails, ms.sampledRead, ms.sampledOf, stackSample, briefly(ms.sampledTook/time.Duration(max(ms.sampled, 1))), briefly(ms.sampledTookMax))
	}
	if ms.goroutineProfiles+ms.goroutineFails > 0 {
		r.addNote("stopped the process %d time(s) to read its goroutines' stacks (%d failed): %s in all, %s at most; it was resumed each time",
			ms.goroutineProfiles+ms.goroutineFails, ms.goroutineFails, briefly(ms.stopped), briefly(ms.longest))
	}
	ms.mu.Lock()
	ms.rd.Close()
	ms.mu.Unlock()
	r.mu.Lock()
	r.mem = nil
	r.mu.Unlock()
}

// briefly rounds a short duration a note reports to what a person reads: a millisecond above
// a second ("6.502s"), a microsecond below ("2.243ms", "450µs").
func briefly(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
