package recorder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/procfs"
	"github.com/memdoctor/memdoctor/collect/scrape"
	"github.com/memdoctor/memdoctor/session"
)

// recorder is the state shared by the sampling and profiling loops.
type recorder struct {
	cfg   Config
	w     *session.Writer
	log   *slog.Logger
	gc    *gcTracker
	start time.Time

	mu         sync.Mutex
	pid        int // the target's PID; 0 while unknown or when it is not on this machine
	root       int // run: the process memdoctor started, whose tree it measures too
	targetName string
	pprof      *scrape.Client
	agent      *agentSource // an embedded memdoctor agent (watch); nil when none
	mem        *memSource   // the process's memory, read when it serves neither pprof nor an agent; nil otherwise
	status     Status
	goroutines int           // the latest goroutine count: the index page, a goroutine profile or the agent
	countedAt  time.Time     // when the count was last read by a sample (the index page, the process's memory, the agent)
	index      indexState    // what the per-sample index reads learnt
	gone       chan struct{} // closed when the local target has exited
	goneOnce   sync.Once
	// unreachable is closed after unreachableRounds snapshot rounds failed entirely.
	unreachable     chan struct{}
	unreachableOnce sync.Once
	failedRounds    int
	writeErrs       int
	watched         *watchTarget // watch: what answered at the URL
	pc              procCheck    // watch: is the local process found the service?
	firstWriteErr   error
	// gcBase is the target's gctrace time base as the manifest last got it.
	gcBase time.Time
	// lastGCCycles is the target's GC count at the last MemStats reading (a drop: a restart);
	// gcMovedAt when a reading last found it changed, and liveHeap the live heap then (the
	// heap in use when only MemStats give it: an upper bound).
	lastGCCycles uint64
	gcCountSeen  bool // the count was read since the process was found (a restart clears it)
	gcMovedAt    time.Time
	liveHeap     uint64
	// asks is what the GCs asked of the target went through (requestGC).
	asks gcAsks
	// memStats paces the MemStats reads between snapshots; stacks, the goroutine profiles.
	memStats memStatsState
	stacks   stacksState

	// tries counts the reads of each kind of data for the manifest's Attempts; costs adds up
	// what they cost the target, for its Costs.
	tries tally
	costs costTally
	// asking is held while a request to the target's pprof is in flight (asked): one at a time.
	asking chan struct{}
	// starving serializes pprofStarved.
	starving sync.Mutex
	// crowdTried: the memory of a program memdoctor runs was tried once its goroutines
	// passed manyStacks (readCrowded).
	crowdTried bool

	// oom decides when memory near its limit calls for profiles at once; urgent asks the
	// profile loop for them. lastCgroup is a reading of the target's cgroup (keepCgroup), read again
	// once the target ended (endOnce) for its OOM kills.
	oom    oomWatch
	urgent chan struct{}
	// sampleAsked asks the sample loop for a sample at once, closing the channel sent once
	// it is taken (sampleNow: the reading a GC asked of the target made).
	sampleAsked chan chan struct{}
	lastCgroup  procfs.Cgroup
	cgroupKills map[string]uint64 // by cgroup directory, the OOM-kill count first read there
	endOnce     sync.Once
}

func newRecorder(cfg Config, w *session.Writer) *recorder {
	r := &recorder{cfg: cfg, w: w, log: cfg.Logger, start: time.Now(), gone: make(chan struct{}), unreachable: make(chan struct{}),
		urgent: make(chan struct{}, 1), asking: make(chan struct{}, 1), sampleAsked: make(chan chan struct{}), cgroupKills: map[string]uint64{}}
	r.gc = newGCTracker(func(tl traceLine, base time.Time) {
		if err := w.AppendGCTrace(tl.line); err != nil {
			r.writeFailed(err)
		}
		r.gcBaseKnown(base)
	})
	return r
}

// ErrSessionWrite reports a session that could not be written whole (a full disk): what was
// written is readable, the rest is lost.
var ErrSessionWrite = errors.New("the session could not be written whole")

// writeFailed logs a failed session write: the first, then every hundredth, so a full disk
// does not flood the log. Collection goes on: what was written stays readable.
func (r *recorder) writeFailed(err error) {
	r.mu.Lock()
	r.writeErrs++
	n := r.writeErrs
	if n == 1 {
		r.firstWriteErr = err
	}
	r.mu.Unlock()
	if n == 1 || n%100 == 0 {
		r.log.Warn("session write failed; collection goes on", "err", err, "failures", n)
	}
}

// writeError says how many session writes failed, or returns nil when none did.
func (r *recorder) writeError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writeErrs == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d write(s) failed, the first: %w; what was written is still readable", ErrSessionWrite, r.writeErrs, r.firstWriteErr)
}

// gcBaseKnown writes the gctrace time base to the manifest as soon as it is known, so that a
// collector killed later leaves the GC timeline placed in time. The tracker refines the base
// as lines arrive (see stream); refinements go with the next manifest write.
func (r *recorder) gcBaseKnown(base time.Time) {
	r.mu.Lock()
	first := r.gcBase.IsZero()
	r.gcBase = base
	r.mu.Unlock()
	if first {
		r.note(func(*session.Manifest) {})
	}
}

// counted reports whether the goroutine count is read every sample (countedAt): a sample read
// it within the last two sample intervals. r.mu is held.
func (r *recorder) counted(now time.Time) bool {
	return !r.countedAt.IsZero() && now.Sub(r.countedAt) <= 2*r.cfg.Sample+time.Second
}

func (r *recorder) target() (pid int, pprof *scrape.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pid, r.pprof
}

func (r *recorder) setPprof(c *scrape.Client) {
	r.mu.Lock()
	r.pprof = c
	r.status.Profiles = r.status.Profiles || c != nil
	r.mu.Unlock()
	if c != nil {
		r.note(func(m *session.Manifest) { m.Target.PprofURL = c.BaseURL() })
	}
}

// note updates the manifest, logging a failure. Every manifest write carries the latest
// attempt counts and gctrace time base.
func (r *recorder) note(fn func(*session.Manifest)) {
	attempts, gen := r.tries.snapshot()
	costs, costGen := r.costs.snapshot()
	r.mu.Lock()
	base := r.gcBase
	r.mu.Unlock()
	err := r.w.UpdateManifest(func(m *session.Manifest) {
		fn(m)
		if attempts != nil {
			m.Attempts = attempts
		}
		if costs != nil {
			m.Costs = costs
		}
		if !base.IsZero() {
			m.GCTraceBase = base.UTC()
		}
	})
	if err != nil {
		r.writeFailed(err)
		return
	}
	r.tries.written(gen)
	r.costs.written(costGen)
}

// manifestEvery is how often the manifest is rewritten when only counts changed.
const manifestEvery = 5 * time.Second

// flushManifest rewrites the manifest if the attempt counts or costs changed since its last
// write.
func (r *recorder) flushManifest() {
	if r.tries.changed() || r.costs.changed() {
		r.note(func(*session.Manifest) {})
	}
}

// noteAttempts adds a note for each kind of data that never came or mostly failed.
func (r *recorder) noteAttempts() {
	for _, n := range r.tries.notes() {
		r.addNote("%s", n)
	}
}

func (r *recorder) addNote(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.log.Info(msg)
	r.note(func(m *session.Manifest) { m.Notes = append(m.Notes, msg) })
}

func (r *recorder) markGone() {
	r.goneOnce.Do(func() { close(r.gone) })
	r.ended()
}

// ended reads what is left to read once the target has ended (its cgroup's OOM kills).
func (r *recorder) ended() { r.endOnce.Do(r.cgroupAfterEnd) }

// sampleLoop appends a /proc (and cgroup) sample every cfg.Sample, and reports the status.
// discover, when set, runs before each sample until it returns true.
func (r *recorder) sampleLoop(ctx context.Context, discover func() bool) {
	t := time.NewTicker(r.cfg.Sample)
	defer t.Stop()
	found := discover == nil
	flushed := time.Now()
	for {
		if !found {
			found = discover()
		}
		r.sampleOnce()
		if time.Since(flushed) >= manifestEvery {
			r.flushManifest()
			flushed = time.Now()
		}
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return
			case <-r.gone:
				return
			case <-t.C:
				waiting = false
			case done := <-r.sampleAsked: // a GC was asked of the target: its reading now
				r.sampleOnce()
				close(done)
			case <-r.urgent: // near the memory limit and rising: profiles now, not at the tick
				if _, c := r.target(); c != nil {
					r.captureBeforeOOM(ctx, c)
				}
			}
		}
	}
}

// sampleOnce appends one sample: the target's /proc and cgroup when memdoctor reads them, and
// the counts of the pprof index page when a pprof endpoint is known.
func (r *recorder) sampleOnce() {
	pid, _ := r.target()
	now := time.Now()
	counts := r.readIndex() // the pprof index's counts, which join this instant's /proc reading
	r.sampleMemStats(now)
	if why := r.agentStarved(now); why != "" {
		r.readMemoryBesideAgent(why)
	}
	r.sampleMemory(now)
	switch {
	case pid != 0 && r.exited(pid):
		r.markGone()
	case pid != 0 && r.agentHasProc() && !r.memBesideAgent():
		// The agent reads /proc itself, every second: only watch that the process lives (and
		// that it is the service).
		if st, err := r.cfg.FS.Status(pid); errors.Is(err, fs.ErrNotExist) {
			r.markGone()
		} else if err == nil {
			r.checkRSS(st.VmRSS)
			// The agent does not read the scheduler's statistics: how busy the machine is.
			if sch := readSched(r.cfg.FS, pid); sch != nil {
				if err := r.w.AppendSample(session.Sample{Time: now.UTC(), Sched: sch}); err != nil {
					r.writeFailed(err)
				}
			}
		}
	case pid != 0:
		smp, cg, cgErr, err := sampleProc(r.cfg.FS, pid, now)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.markGone()
		case err != nil:
			r.tries.add(session.AttemptProc, err)
			r.log.Debug("proc sample failed", "pid", pid, "err", err)
		default:
			r.tries.add(session.AttemptProc, nil)
			r.tries.add(session.AttemptCgroup, cgErr)
			if cgErr == nil {
				r.keepCgroup(cg)
			}
			if r.root != 0 {
				addTree(r.cfg.FS, r.root, &smp)
			}
			r.mu.Lock()
			r.status.RSSBytes = smp.Proc.RSSBytes
			r.mu.Unlock()
			for _, s := range r.admitProc(smp) {
				if counts != nil && s.Time.Equal(smp.Time) {
					s.Pprof, counts = counts, nil
				}
				if err := r.w.AppendSample(s); err != nil {
					r.writeFailed(err)
				}
			}
			r.checkLimit(smp)
		}
	}
	if counts != nil { // no /proc reading written with them (remote, held back, or dropped)
		if err := r.w.AppendSample(session.Sample{Time: now.UTC(), Pprof: counts}); err != nil {
			r.writeFailed(err)
		}
	}
	gs := r.gc.stats(now)
	r.mu.Lock()
	r.status.Elapsed = now.Sub(r.start)
	r.status.PID = r.pid
	r.status.Target = r.targetName
	if gs.Cycles > 0 {
		r.status.GCPerSecond = gs.PerSecond
		r.status.HeapBytes = gs.Last.HeapEnd
	}
	st := r.status
	r.mu.Unlock()
	if r.cfg.OnStatus != nil {
		r.cfg.OnStatus(st)
	}
}

// exited reports whether the process is gone: no /proc entry, in its exit, or a zombie (dead,
// waiting for its parent to reap it).
func (r *recorder) exited(pid int) bool {
	st, err := r.cfg.FS.Stat(pid)
	return errors.Is(err, fs.ErrNotExist) || err == nil && st.Exiting()
}

// profileLoop takes a snapshot as soon as a pprof endpoint is known, then every cfg.Interval.
func (r *recorder) profileLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	n := 0
	for {
		if _, c := r.target(); c != nil {
			r.snapshot(ctx, c, (n+1)%r.cfg.GoroutineTextEvery == 0, false)
			n++
			poll.Stop()
		} else {
			select { // wait for discovery, not a whole interval
			case <-ctx.Done():
				return
			case <-r.gone:
				return
			case <-poll.C:
				continue
			}
		}
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return
			case <-r.gone:
				return
			case <-t.C:
				waiting = false
			case <-r.urgent: // near the memory limit and rising: profiles now, not at the tick
				if _, c := r.target(); c != nil {
					r.captureBeforeOOM(ctx, c)
				}
			}
		}
	}
}
