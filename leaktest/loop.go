package leaktest

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/leaktest/trend"
)

// running is set while a Loop runs: the heap is the process's, so two at once would measure
// each other.
var running atomic.Bool

// parallelEnv is the variable Loop sets with t.Setenv: testing refuses it in a parallel test,
// which is how Loop knows one, and refuses t.Parallel after it.
const parallelEnv = "MEMDOCTOR_LEAKTEST"

// Loop calls fn over and over and fails t when the live heap or the goroutines keep growing
// with the calls: a leak. See the package documentation for how it judges and what the
// failure says; the options and their defaults are in Option's list.
//
// It calls fn on a goroutine of its own and returns within a few seconds of TimeLimit (of
// three times it when the rounds are too few for a verdict) whatever fn does: a call that never returns fails t, saying where it waits; a panic in fn
// is raised again on the calling goroutine, and runtime.Goexit in fn (t.FailNow, t.SkipNow)
// ends it.
//
// It refuses a parallel test (t.Parallel) and a second Loop running at the same time: the
// heap and the goroutines it measures are the whole process's.
func Loop(t testing.TB, fn func(), opts ...Option) {
	t.Helper()
	rep := checkWith(t, fn, nil, opts)
	if rep == nil {
		return
	}
	if rep.Hung != "" {
		t.Error(rep.Hung)
	}
	if rep.Verdict == VerdictLeak {
		t.Error(rep.Message)
		return
	}
	t.Log(rep.Message)
}

// checkWith runs a Loop and returns its report, or nil when it refused to run (and said why
// with t.Fatal). pre, when set, changes the run before it starts (CheckTest's).
func checkWith(t testing.TB, fn func(), pre func(*run), opts []Option) *Report {
	t.Helper()
	cfg := defaults()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	if err := cfg.check(); err != nil {
		t.Fatalf("leaktest: %v", err)
		return nil
	}
	if fn == nil {
		t.Fatalf("leaktest: Loop was given a nil function to call")
		return nil
	}
	if msg := refuseParallel(t); msg != "" {
		t.Fatal(msg)
		return nil
	}
	if !running.CompareAndSwap(false, true) {
		t.Fatalf("leaktest: %s: another Loop is running in this process: the heap is the process's, so Loops run one at a time", t.Name())
		return nil
	}
	defer running.Store(false)
	r := newRun(&cfg, fn)
	r.test = t.Name()
	if cfg.heap {
		// Sample every allocation, so that the profile names every site of the growth, until
		// the failure is written: memdoctor holders reads the rate to weigh each sample.
		r.profileRate = runtime.MemProfileRate
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = r.profileRate }()
	}
	if pc, file, line, ok := runtime.Caller(2); ok { // the test's line that called Loop
		r.attr.loopCall = frame{fn: "(the caller of leaktest.Loop)", file: file, line: line}
		if f := runtime.FuncForPC(pc); f != nil {
			r.attr.loopCall.fn = f.Name()
		}
	}
	if pre != nil {
		pre(r)
	}
	res := r.do()
	if testHookRun != nil {
		testHookRun(r)
	}
	switch {
	case r.last.panicked:
		// Panic on the test's goroutine, as a call of fn there would have, after saying where
		// fn panicked (its own goroutine's stack).
		t.Errorf("leaktest: fn panicked: %v\n%s", r.last.value, r.last.stack)
		panic(r.last.value)
	case r.last.exited:
		// fn called t.FailNow, t.SkipNow or runtime.Goexit: end the test's goroutine too.
		runtime.Goexit()
	}
	return r.report(res)
}

// testHookRun, when set (by leaktest's benchmarks), is given each finished run.
var testHookRun func(*run)

// refuseParallel returns why Loop cannot run in t, or "" when it can.
func refuseParallel(t testing.TB) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			s := fmt.Sprint(p)
			if strings.Contains(s, "Parallel") || strings.Contains(s, "parallel") {
				msg = fmt.Sprintf("leaktest: %s is a parallel test (t.Parallel): Loop measures the process's heap and goroutines, which the tests running beside it would change; remove t.Parallel() from it (and from its parents)", t.Name())
				return
			}
			msg = fmt.Sprintf("leaktest: %s: %v", t.Name(), p)
		}
	}()
	t.Setenv(parallelEnv, "1")
	return ""
}

// run is one Loop: its rounds and their readings.
type run struct {
	cfg      *config
	fn       func()
	test     string // the test's name
	probe    *probe
	attr     attributor
	caller   *caller
	loopID   int64 // the goroutine Loop runs on
	start    time.Time
	deadline time.Time // start + TimeLimit: no call starts after it
	// extended says the deadline was moved to maxLimits times the time limit: too few readings
	// at the limit.
	extended bool

	calls    int64 // measured calls so far
	perRound int64
	warmup   int64 // calls before the baseline
	readings []reading
	elapsed  time.Duration
	inFn     time.Duration // spent calling fn
	// ended is how the calls ended: every call returned, or the deadline cut them, a call
	// hung, or fn panicked (last is the batch that did).
	ended ended
	last  batch
	// spun is how many goroutines that never block the calls left (0: none), which turned the
	// heap's judgement off; spinBase how many there were before the first call, and burnBase
	// the cores the process spent then while Loop waited (-1: not known).
	spun, spinBase int
	burnBase       float64
	// before is the reading before the first call; readLate says a reading had not ended a
	// grace after the deadline.
	before   reading
	readLate bool
	// workEnd is when the goroutines of the last calls settled, and workCPU the process's
	// CPU time then.
	workEnd time.Time
	workCPU time.Duration
	// The baseline's profile and goroutines, against which the growth is named.
	baseHeap    map[[32]uintptr]heapRecord
	baseGroups  map[groupKey]*goroutineGroup
	profileRate int
	// halt, when set, says why fn's calls cannot go on ("" while they can): CheckTest's run
	// of a test that failed. The rounds stop, with no verdict.
	halt func() string
	// unit and of name what Loop calls in its words: "call" of "fn", or "run" of a test.
	unit, of string
}

// maxReadings bounds the readings a run keeps (and so the rounds it runs).
const maxReadings = 1000

// minReadings is the fewest readings (the baseline's and one per round) a run takes before
// it may pass, and minConfirmReadings before it may fail: a cache that fills over the first
// rounds has the time to level off.
const minReadings, minConfirmReadings = 10, 8

func newRun(cfg *config, fn func()) *run {
	r := &run{cfg: cfg, fn: fn, probe: newProbe(cfg), readings: make([]reading, 0, maxReadings), unit: "call", of: "fn"}
	r.attr.mods = readModules()
	r.attr.boundary = callsFunc
	return r
}

// haltReason is why fn's calls cannot go on, or "" while they can.
func (r *run) haltReason() string {
	if r.halt == nil {
		return ""
	}
	return r.halt()
}

// callsFunc is the name of the function that calls fn: the boundary of fn's stacks.
var callsFunc = func() string {
	pc := make([]uintptr, 1)
	c := &caller{fn: func() { runtime.Callers(2, pc) }}
	var done int64
	c.run(1, &done)
	f, _ := runtime.CallersFrames(pc).Next()
	return f.Function
}()

// result is a run's verdicts.
type result struct {
	heap, goroutines growth
	heapOn, gorOn    bool
	timedOut         bool
	tooFew           bool   // stopped before the readings a verdict needs
	halted           string // why the run stopped before a verdict (CheckTest: a run failed)
	// A call of fn that had not returned a grace after the time limit: hung for sure (far
	// slower than the others, or the first: Loop fails), or slow.
	hung, slow bool
}

// failed reports whether a leak was confirmed.
func (res result) failed() bool {
	return res.heapOn && res.heap.conf == confirmed || res.gorOn && res.goroutines.conf == confirmed
}

func (r *run) do() result {
	r.start = time.Now()
	r.deadline = r.start.Add(r.cfg.timeLimit)
	r.loopID = goroutineID()
	r.caller = newCaller(r.fn)
	defer r.caller.close()
	defer func() { r.inFn = r.caller.callTime }()
	res := result{heapOn: r.cfg.heap, gorOn: r.cfg.goroutines}
	if !r.warm(&res) {
		// fn panicked, or hung, or the time limit came before the first round: nothing to
		// judge.
		return r.finish(res)
	}
	if r.cfg.heap {
		r.baseHeap = heapProfile()
	}
	if r.cfg.goroutines {
		r.baseGroups = groupGoroutines(r.others(), r.cfg.ignoreTop)
	}
	if rd, ok := r.read(0); ok {
		r.readings = append(r.readings, rd)
		r.rounds(&res)
	}
	return r.finish(res)
}

// warm sizes the rounds and runs the warm-up, and bounds the calls per round by what the
// warm-up left. It returns false when the calls must stop before the first round.
func (r *run) warm(res *result) bool {
	before, ok := r.read(0)
	gBefore := runtime.NumGoroutine()
	r.before = before
	if !ok {
		return false
	}
	r.spinBase, _ = r.spinners()
	r.burnBase = r.burn()
	n, more := r.size()
	if more && r.haltReason() == "" {
		var done int64
		done, more = r.callSettled(int64(r.cfg.warmup) + n)
		r.warmup += done
	}
	if res.halted = r.haltReason(); !more || res.halted != "" {
		return false
	}
	spun, _ := r.spinners()
	spun = max(spun-r.spinBase, 0)
	r.spinOff(spun, res) // before the next reading's garbage collection
	after, ok := r.read(0)
	if !ok {
		return false
	}
	burned := -1.0
	if r.burnBase >= 0 {
		burned = r.burn() - r.burnBase
	}
	// Bound the rounds by every goroutine, those IgnoreTopFunction leaves out included.
	before.goroutines, after.goroutines = float64(gBefore), float64(runtime.NumGoroutine())
	r.perRound = r.bound(n, before, after, spun, burned)
	return true
}

// rounds runs the rounds, a reading after each, until the readings confirm a leak or its
// absence, or the time limit.
func (r *run) rounds(res *result) {
	for more := true; more; {
		if res.halted = r.haltReason(); res.halted != "" {
			return
		}
		var done int64
		done, more = r.callSettled(r.perRound)
		if !more && r.extend(done) {
			more = true
		}
		if done == 0 && !more {
			return // the deadline came between rounds: the last reading stands
		}
		r.calls += done
		t0 := time.Now()
		rd, ok := r.read(r.calls)
		if !ok {
			return
		}
		r.readings = append(r.readings, rd)
		if r.probe.collect && time.Since(t0) >= slowReading {
			spun, _ := r.spinners()
			r.spinOff(max(spun-r.spinBase, 0), res)
		}
		res.heap, res.goroutines = r.judge(res.heapOn, res.gorOn)
		if res.heap.conf == confirmed && len(r.readings) >= minConfirmReadings && len(r.readings) < inFlightFadeReadings {
			if share := r.inFlightShare(); share >= inFlightMajority {
				res.heap.conf, res.heap.inFlight = suspected, share
			}
		}
		switch {
		case res.failed() && len(r.readings) >= minConfirmReadings,
			len(r.readings) >= minReadings && (!res.heapOn || res.heap.conf == clear) && (!res.gorOn || res.goroutines.conf == clear),
			len(r.readings) == maxReadings:
			return
		case r.extended && len(r.readings) >= minConfirmReadings:
			r.ended = cut // past the time limit, with the readings a verdict needs
			return
		}
	}
}

// extend moves the deadline to maxLimits times the time limit when it cut the rounds with
// fewer readings than a verdict needs (a loaded machine slows the rounds, and must not let a
// leak pass unjudged), once: the rounds stop as soon as the readings are enough. Not when the
// calls left goroutines that never block (each round would add one) or a reading was late.
func (r *run) extend(done int64) bool {
	need := minConfirmReadings - len(r.readings)
	if done > 0 {
		need-- // this round's reading is still to come
	}
	if r.ended != cut || r.extended || r.readLate || r.spun > 0 || need <= 0 {
		return false
	}
	r.extended = true
	r.deadline = r.start.Add(maxLimits * r.cfg.timeLimit)
	r.caller.stop.Store(false)
	r.ended = returned
	return time.Now().Before(r.deadline)
}

// maxLimits is how many times the time limit Loop runs at most for the readings a verdict
// needs.
const maxLimits = 3

// finish says how the run ended: at the time limit, with a call hung (or slow), with too few
// readings for a verdict.
func (r *run) finish(res result) result {
	r.elapsed = time.Since(r.start)
	res.timedOut = r.ended != returned || r.readLate
	res.hung = r.ended == hung && r.caller.hungForSure()
	res.slow = r.ended == hung && !res.hung
	if len(r.readings) == 0 {
		r.readings = append(r.readings, r.before)
	}
	if len(r.readings) < minConfirmReadings {
		// Too few rounds within the time limit (a machine starved of CPU, a slow function):
		// no verdict either way.
		res.tooFew = true
		res.heap.conf, res.goroutines.conf = min(res.heap.conf, suspected), min(res.goroutines.conf, suspected)
	}
	return res
}

// read takes a reading on a goroutine of its own, and waits for it until readGrace after the
// deadline: its garbage collection waits its turn behind every goroutine that never blocks,
// which fn's calls may have left. It returns false when it gave up (r.readLate).
func (r *run) read(calls int64) (reading, bool) {
	rd, ok := within(r.deadline.Add(readGrace), func() reading { return r.probe.read(calls) })
	r.readLate = r.readLate || !ok
	return rd, ok
}

// within runs f on a goroutine of its own and waits for it until the time given: false when
// it gave up (f goes on, its result dropped).
func within[T any](until time.Time, f func() T) (T, bool) {
	out := make(chan T, 1)
	go func() { out <- f() }()
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case v := <-out:
		return v, true
	case <-t.C:
		var zero T
		return zero, false
	}
}

// readGrace is how long after the deadline a reading may end.
const readGrace = time.Second

// judge judges the readings so far.
func (r *run) judge(heapOn, gorOn bool) (heap, gor growth) {
	hp := make([]trend.Point, len(r.readings))
	gp := make([]trend.Point, len(r.readings))
	for i, rd := range r.readings {
		hp[i] = trend.Point{At: rd.calls, V: rd.heap}
		gp[i] = trend.Point{At: rd.calls, V: rd.goroutines}
	}
	if heapOn {
		heap = judge(hp, r.cfg.minBytesPerCall, minHeapGrowth)
	}
	if gorOn {
		gor = judge(gp, r.cfg.minGoroutinesPerCall, minGoroutineGrowth)
	}
	return heap, gor
}

// A growth mostly made by stacks that allocated many times what they hold is memory in
// flight (timers pending, buffers of requests under way, at the moment of each reading), not
// memory kept, as memdoctor's diagnosis judges it (its HeapLeak.InFlightTurnover and
// InFlightMajority): such a growth is only suspected, for more rounds, until the readings are
// many enough that what is in flight has had every chance to level off. A leaking stack keeps
// most of what it allocates (a growing slice's copies make it allocate two or three times what
// it holds); memory in flight is allocated as many times over what it holds as the rounds
// outlast its lifetime, which on a loaded machine (timers late by a quarter of a second) can be
// as few as a handful of rounds: the bar is 5 here, where the diagnosis's, on sampled
// profiles over minutes, is 20.
const (
	inFlightTurnover     = 5
	inFlightMajority     = 2.0 / 3
	inFlightFadeReadings = 30
)

// inFlightShare is the share of the heap profile's growth since the baseline made by stacks
// that allocated at least inFlightTurnover times what they hold now.
func (r *run) inFlightShare() float64 {
	if r.baseHeap == nil {
		return 0
	}
	var total, inFlight float64
	for _, d := range diffHeap(r.baseHeap, heapProfile()) {
		if d.inUseBytes <= 0 {
			continue
		}
		fr, _ := r.attr.frames(d.stack)
		if r.leftOut(fr) {
			continue
		}
		total += float64(d.inUseBytes)
		if d.allocBytes >= inFlightTurnover*d.inUseBytes {
			inFlight += float64(d.inUseBytes)
		}
	}
	if total == 0 {
		return 0
	}
	return inFlight / total
}

// leftOut reports a stack the heap's growth leaves out: Loop's own (its baseline's profile
// and goroutines, read between the readings: this package's files, not its subpackages',
// whose code may be the test's, as leaktest/harness's wrapper of a test is), the goroutines'
// records and what IgnoreSites names.
func (r *run) leftOut(fr []frame) bool {
	for _, f := range fr {
		if isOwnFile(f.file) {
			return true
		}
	}
	return ignoredStack(fr, r.cfg.ignoreSites) || ignoredStack(fr, runtimeKept)
}

// isOwnFile reports whether a frame's file is one of this package's (its tests' aside; its
// subpackages' are not: leaktest/harness's wrapper of a test runs the test).
func isOwnFile(file string) bool {
	rest, ok := strings.CutPrefix(file, ownDir)
	return ok && !strings.Contains(rest, "/") && !strings.HasSuffix(file, "_test.go")
}

// ownDir is this package's source directory, as its frames name their files.
var ownDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return file[:strings.LastIndexByte(file, '/')+1]
}()

// cpuNow is the process's CPU time, or -1 when it cannot be read.
func cpuNow() time.Duration {
	if d, ok := cpuTime(); ok {
		return d
	}
	return -1
}
