package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

// Agent is the running watchdog. Its methods are safe for concurrent use.
type Agent struct {
	cfg   config
	log   *slog.Logger
	start time.Time
	info  Info // the static part

	ring      *ring
	store     *profileStore
	flight    *flight // nil when off
	trig      *triggers
	guard     *guard
	hook      *gcHook
	mr        *metricsReader
	gr        *gcReader
	leaks     *leakChecker // nil when off or the runtime has no goroutineleak profile
	memLimit  memLimit
	budgetSrc string

	// Owned by the loop goroutine.
	cur       slot
	cgroupOff bool
	samples   int            // taken so far
	pending   []pendingAfter // events waiting for their "after" profiles
	lastCycle uint64
	exiting   bool

	stopc    chan struct{}
	stopOnce sync.Once
	done     chan struct{} // closed when the agent's own goroutines have returned
	wg       sync.WaitGroup
	// notifyDone is closed when the goroutine that calls the pressure callback has returned;
	// nil without a callback.
	notifyDone chan struct{}
	panics     sync.Map // where -> count, for the log
}

// Start starts the agent: it sets GOMEMLIMIT if asked to and starts the agent's goroutine,
// which takes the first profile round and sample at once and runs until Stop is called or
// ctx is done. It fails only on an invalid option.
// Start never calls runtime.ReadMemStats and never blocks the program: the work runs on one
// goroutine of the agent's own (two with WithPressureFunc, and one more while a
// goroutineleak profile is written). It forces no GC but the goroutineleak profile's, when
// the runtime has that profile (see WithLeakCheckInterval).
func Start(ctx context.Context, opts ...Option) (*Agent, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	cfg.logger = safeLogger(cfg.logger)
	a := &Agent{
		cfg:   cfg,
		log:   cfg.logger,
		start: time.Now(),
		stopc: make(chan struct{}),
		done:  make(chan struct{}),
		mr:    newMetricsReader(),
		gr:    newGCReader(),
	}
	slots := int(cfg.history / cfg.sampleInterval)
	a.ring = newRing(max(slots, 1))
	a.store = newProfileStore(cfg.profileRounds, cfg.keptEvents, cfg.profileBytes)

	var err error
	a.memLimit, err = applyMemLimit(cfg.fs, cfg.pid, cfg.memLimitRatio, osGetenv)
	if err != nil {
		a.log.Info("memdoctor agent: "+err.Error(), "ratio", cfg.memLimitRatio)
	} else if a.memLimit.set {
		a.log.Info("memdoctor agent: set GOMEMLIMIT from the cgroup limit", "gomemlimit_bytes", a.memLimit.value, "cgroup_limit_bytes", a.memLimit.cgroup, "ratio", cfg.memLimitRatio)
	}

	budget, src := cfg.budget, "option"
	if budget == 0 {
		src = ""
		if cg, err := cfg.fs.Cgroup(cfg.pid); err == nil && cg.LimitBytes > 0 {
			budget, src = cg.LimitBytes, "cgroup"
		}
	}
	a.budgetSrc = src
	hard := 0.0
	if cfg.exitDir != "" {
		hard = cfg.hardLimit
		if hard == 0 {
			hard = cfg.pressureCritical
		}
		if budget == 0 {
			a.log.Warn("memdoctor agent: the exit action needs a memory budget (WithBudget or a cgroup limit); it stays off")
		}
	}
	a.guard = newGuard(budget, cfg.pressureHigh, cfg.pressureCritical, hard, cfg.exitHold, cfg.pressureFunc != nil)

	rss := cfg.rssThreshold
	if !cfg.rssThresholdSet && budget > 0 {
		rss = uint64(float64(budget) * cfg.pressureHigh)
	}
	a.trig = newTriggers(triggerConfig{
		heapRatio: cfg.heapJumpRatio, heapBytes: cfg.heapJumpBytes, rssThreshold: rss,
		goroutineN: cfg.goroutineGrowth, goroutineRatio: cfg.goroutineRatio, cooldown: cfg.cooldown,
	}, cfg.sampleInterval)

	if cfg.flightRecorder {
		if a.flight, err = startFlight(cfg.flightMinAge, cfg.flightMaxBytes, cfg.keptTraces); err != nil {
			a.log.Warn("memdoctor agent: no flight recorder", "err", err)
		}
	}
	a.leaks = newLeakChecker(cfg)
	a.info = a.staticInfo(budget)
	a.hook = startGCHook()
	a.wg.Add(1)
	go a.loop(ctx)
	if cfg.pressureFunc != nil {
		a.notifyDone = make(chan struct{})
		go a.notifyLoop()
	}
	go func() { a.wg.Wait(); close(a.done) }()
	return a, nil
}

// callbackWait is how long Stop waits for a running pressure callback when its context has
// no deadline.
const callbackWait = time.Second

// Stop stops the agent and waits, until ctx is done, for its goroutines to return. It stops
// the flight recorder, restores a GOMEMLIMIT the agent set, and keeps what was captured
// readable (Handler still serves it). Calling it again is harmless.
//
// No pressure callback (WithPressureFunc) starts once Stop is called, but one may be running:
// Stop waits for it until ctx's deadline, or for at most one second when ctx has no deadline
// (context.Background()), so that a callback that never returns cannot hold Stop forever. A
// callback still running then goes on by itself; its goroutine returns when it does. Stop
// returns ctx's error when ctx ended first.
func (a *Agent) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() { close(a.stopc) })
	select {
	case <-a.done:
	case <-ctx.Done():
		return fmt.Errorf("memdoctor agent: stop: %w", ctx.Err())
	}
	if a.notifyDone == nil {
		return nil
	}
	wait := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, callbackWait)
		defer cancel()
	}
	select {
	case <-a.notifyDone:
		return nil
	case <-wait.Done():
		if ctx.Err() != nil {
			return fmt.Errorf("memdoctor agent: stop: the pressure callback is still running: %w", ctx.Err())
		}
		a.log.Warn("memdoctor agent: stopped without waiting any longer for the pressure callback, which has not returned", "waited", callbackWait)
		return nil
	}
}

// loop is the agent's goroutine: sampling, profiling, triggers, the guard.
func (a *Agent) loop(ctx context.Context) {
	defer a.wg.Done()
	defer a.shutdown()
	a.safe("first round", func() {
		a.periodicProfiles()
		a.sampleOnce()
	})
	sample := time.NewTicker(a.cfg.sampleInterval)
	defer sample.Stop()
	profiles := time.NewTicker(a.cfg.profileInterval)
	defer profiles.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.stopc:
			return
		case <-sample.C:
			a.safe("sample", a.sampleOnce)
		case <-a.hook.c:
			a.safe("gc", a.onGC)
		case <-profiles.C:
			a.safe("profiles", a.periodicProfiles)
		}
	}
}

func (a *Agent) shutdown() {
	a.stopOnce.Do(func() { close(a.stopc) })
	a.hook.stop()
	if len(a.pending) > 0 {
		ids := make([]uint64, 0, len(a.pending))
		for _, p := range a.pending {
			ids = append(ids, p.id)
		}
		a.pending = nil
		a.safe("after", func() { a.captureAfter(time.Now(), ids) })
	}
	if a.flight != nil {
		a.flight.stop()
	}
	a.memLimit.undo()
}

// safe runs fn, recovering and logging a panic: the agent must never take its host down.
func (a *Agent) safe(where string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			n := 1
			if v, ok := a.panics.Load(where); ok {
				n = v.(int) + 1
			}
			a.panics.Store(where, n)
			if n <= 3 {
				a.log.Error("memdoctor agent: recovered from a panic; the agent goes on", "in", where, "panic", r, "count", n, "stack", string(debug.Stack()))
			}
		}
	}()
	fn()
}

// sampleOnce takes one sample into the ring and runs the triggers and the guard on it.
func (a *Agent) sampleOnce() {
	now := time.Now()
	s := &a.cur
	s.t = now.UTC()
	a.mr.read(&s.gomem)
	s.hasGo = true
	s.hasPrc = a.readProc(&s.proc)
	s.hasCg = a.samples%a.cgroupEvery() == 0 && a.readCgroup(&s.cg)
	a.samples++
	a.ring.add(s)

	var rss uint64 // 0 = unknown
	used := s.gomem.RuntimeResident()
	if s.hasPrc {
		rss, used = s.proc.RSSBytes, s.proc.RSSBytes
	}
	goroutines := uint64(s.gomem.Goroutines)
	a.checkAfter(now, TriggerRSS, rss, s.gomem.GCCycles, false)
	a.checkAfter(now, TriggerGoroutines, goroutines, s.gomem.GCCycles, false)
	grew := false
	for _, f := range a.trig.onSample(procPoint{t: now, rss: rss, goroutines: s.gomem.Goroutines}) {
		measure := rss
		if f.trigger == TriggerGoroutines {
			measure, grew = goroutines, true
		}
		a.fire(now, f, measure)
	}
	a.checkLeaks(now, s.gomem.Goroutines, grew)
	_, hardFor := a.guard.update(now, used)
	if hardFor >= a.cfg.exitHold && a.cfg.exitDir != "" && !a.exiting {
		a.exiting = true
		a.exitAction(hardFor)
	}
}

// cgroupInterval is how often the cgroup is read: its files (memory.stat above all) cost the
// kernel more than the process's own, and its figures move slowly.
const cgroupInterval = 10 * time.Second

func (a *Agent) cgroupEvery() int { return max(1, int(cgroupInterval/a.cfg.sampleInterval)) }

// onGC runs after each GC cycle (several coalesce into one call when the agent was busy).
func (a *Agent) onGC() {
	now := time.Now()
	p := a.gr.read(now)
	if p.cycle == a.lastCycle {
		return
	}
	a.lastCycle = p.cycle
	a.checkAfter(now, TriggerHeapJump, max(p.live, p.goal/2), p.cycle, true)
	if f, ok := a.trig.onGC(p); ok {
		a.fire(now, f, max(p.live, p.goal/2))
	}
}

// periodicProfiles takes one round of periodic heap and goroutine profiles.
func (a *Agent) periodicProfiles() {
	profs := a.capture()
	if len(profs) > 0 {
		a.store.addPeriodic(time.Now(), profs)
	}
}

func (a *Agent) capture() map[string][]byte {
	profs := make(map[string][]byte, 2)
	for _, kind := range []string{record.KindHeap, record.KindGoroutine} {
		b, err := captureProfile(&a.store.pool, kind)
		if err != nil {
			a.log.Warn("memdoctor agent: profile failed", "kind", kind, "err", err)
			continue
		}
		profs[kind] = b
	}
	return profs
}

// pendingAfter is an event waiting for its "after" profiles.
type pendingAfter struct {
	id       uint64
	trigger  string
	last     uint64 // the measure that fired it, at its latest reading
	deadline time.Time
	// waitCycle is 0 while the measure still rises; then the GC cycle count at which every
	// allocation made before the rise stopped is published in heap profiles.
	waitCycle uint64
}

// fire keeps the "before" profiles of a trigger and records the event; the "after" ones are
// taken once the rise stops (checkAfter).
func (a *Agent) fire(now time.Time, f firing, measure uint64) {
	ev := Event{Time: now.UTC(), Trigger: f.trigger, Detail: f.detail, Values: f.values, SpikeStart: f.spikeStart.UTC()}
	ev = a.store.addEvent(ev, f.spikeStart)
	a.log.Info("memdoctor agent: trigger fired", "trigger", f.trigger, "detail", f.detail, "before", ev.Before)
	a.pending = append(a.pending, pendingAfter{id: ev.ID, trigger: f.trigger, last: measure, deadline: now.Add(a.cfg.afterWindow)})
	if a.cfg.afterWindow == 0 {
		a.captureAfter(now, []uint64{ev.ID})
	}
}

// checkAfter takes a new reading of a trigger's measure (the heap at a GC, RSS, goroutines)
// and the GC cycle count. An event's "after" profiles are due once its measure has stopped
// rising (a reading not above the previous one) and the GCs that publish the allocations
// made until then have run: heap profiles count an allocation only at the end of the second
// GC after it. They are due anyway once the event's after-window has passed.
func (a *Agent) checkAfter(now time.Time, trigger string, measure, cycles uint64, atGC bool) {
	var due []uint64
	kept := a.pending[:0]
	for _, p := range a.pending {
		if p.trigger == trigger && p.waitCycle == 0 {
			if measure <= p.last {
				p.waitCycle = cycles + 2
				if atGC { // the allocations before this GC are published at the next one
					p.waitCycle = cycles + 1
				}
			}
			p.last = measure
		}
		if !now.Before(p.deadline) || (p.waitCycle != 0 && cycles >= p.waitCycle) {
			due = append(due, p.id)
			continue
		}
		kept = append(kept, p)
	}
	a.pending = kept
	if len(due) > 0 {
		a.captureAfter(now, due)
	}
}

// captureAfter takes the "after" profiles (and the flight recorder's window) for the events
// with the given IDs.
func (a *Agent) captureAfter(now time.Time, ids []uint64) {
	a.store.addAfter(ids, now, a.capture())
	if a.flight == nil {
		return
	}
	trigger := "event"
	for _, e := range a.store.eventList() {
		if e.ID == ids[0] {
			trigger = e.Trigger
		}
	}
	ti, err := a.flight.snapshot(now, trigger, ids)
	if err != nil {
		a.log.Warn("memdoctor agent: trace snapshot failed", "err", err)
		return
	}
	a.store.setTrace(ids, ti.Name)
}

// Pressure returns a channel that receives the pressure each time its level changes. It
// holds one value: a reader that falls behind gets the latest level, and the agent never
// waits for it. Every call returns the same channel.
func (a *Agent) Pressure() <-chan Pressure { return a.guard.c }

// CurrentPressure returns the latest pressure reading.
func (a *Agent) CurrentPressure() Pressure { return a.guard.current() }

// notifyLoop calls the pressure callback with each change, recovering its panics. It is not
// one of the agent's own goroutines (Stop does not wait for it without bound): it runs user
// code.
func (a *Agent) notifyLoop() {
	defer close(a.notifyDone)
	for {
		select {
		case <-a.stopc:
			return
		case p := <-a.guard.notify:
			select {
			case <-a.stopc: // both were ready: no callback starts once Stop is called
				return
			default:
			}
			a.safe("pressure callback", func() { a.cfg.pressureFunc(p) })
		}
	}
}

// Events returns the trigger events the agent keeps, oldest first.
func (a *Agent) Events() []Event { return a.store.eventList() }

// Profiles lists the profiles the agent keeps.
func (a *Agent) Profiles() []ProfileInfo { return a.store.list() }

// Traces lists the flight-recorder snapshots the agent keeps.
func (a *Agent) Traces() []TraceInfo {
	if a.flight == nil {
		return []TraceInfo{}
	}
	return a.flight.list()
}

// goVersion is the Go version the program was built with.
func goVersion() string { return runtime.Version() }
