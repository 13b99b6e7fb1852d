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
// It refuses a parallel test (t.Parallel) and a second Loop running at the same time: the
// heap and the goroutines it measures are the whole process's.
func Loop(t testing.TB, fn func(), opts ...Option) {
	t.Helper()
	rep := checkWith(t, fn, nil, opts)
	if rep == nil {
		return
	}
	if rep.Failed() {
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
	cfg   *config
	fn    func()
	test  string // the test's name
	probe *probe
	attr  attributor
	start time.Time

	calls    int64 // measured calls so far
	perRound int64
	warmup   int64 // calls before the baseline
	readings []reading
	elapsed  time.Duration
	inFn     time.Duration // spent calling fn
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
	var r run
	r.fn = func() { runtime.Callers(2, pc) }
	r.callFn(1)
	f, _ := runtime.CallersFrames(pc).Next()
	return f.Function
}()

// callFn calls fn n times.
//
//go:noinline
func (r *run) callFn(n int64) {
	start := time.Now()
	for range n {
		r.fn()
	}
	r.inFn += time.Since(start)
}

// result is a run's verdicts.
type result struct {
	heap, goroutines growth
	heapOn, gorOn    bool
	timedOut         bool
	tooFew           bool   // stopped before the readings a verdict needs
	halted           string // why the run stopped before a verdict (CheckTest: a run failed)
}

func (res result) failed() bool {
	return res.heapOn && res.heap.conf == confirmed || res.gorOn && res.goroutines.conf == confirmed
}

func (r *run) do() result {
	r.start = time.Now()
	before, gBefore := r.probe.read(0), runtime.NumGoroutine()
	n := r.size()
	r.callFn(int64(r.cfg.warmup))
	r.callFn(n)
	r.warmup += int64(r.cfg.warmup) + n
	after, gAfter := r.probe.read(0), runtime.NumGoroutine()
	// Bound the rounds by every goroutine, those IgnoreTopFunction leaves out included.
	before.goroutines, after.goroutines = float64(gBefore), float64(gAfter)
	r.perRound = r.bound(n, before, after)

	if r.cfg.heap {
		r.baseHeap = heapProfile()
	}
	if r.cfg.goroutines {
		r.baseGroups = groupGoroutines(dumpGoroutines(), r.cfg.ignoreTop)
	}
	r.readings = append(r.readings, r.probe.read(0))
	res := result{heapOn: r.cfg.heap, gorOn: r.cfg.goroutines}
	for {
		if res.halted = r.haltReason(); res.halted != "" {
			break
		}
		r.callFn(r.perRound)
		r.calls += r.perRound
		r.readings = append(r.readings, r.probe.read(r.calls))
		res.heap, res.goroutines = r.judge()
		if res.heap.conf == confirmed && len(r.readings) >= minConfirmReadings && len(r.readings) < inFlightFadeReadings {
			if share := r.inFlightShare(); share >= inFlightMajority {
				res.heap.conf, res.heap.inFlight = suspected, share
			}
		}
		r.elapsed = time.Since(r.start)
		if res.failed() && len(r.readings) >= minConfirmReadings {
			break
		}
		if len(r.readings) >= minReadings && (!res.heapOn || res.heap.conf == clear) && (!res.gorOn || res.goroutines.conf == clear) {
			break
		}
		// At the time limit, a judgement needs the readings a confirmation needs: a loaded
		// machine slows the rounds, and must not let a leak pass unjudged (up to three times
		// the limit).
		enough := len(r.readings) >= minConfirmReadings || r.elapsed >= 3*r.cfg.timeLimit
		if r.elapsed >= r.cfg.timeLimit && enough || len(r.readings) == maxReadings {
			res.timedOut = true
			break
		}
	}
	if len(r.readings) < minConfirmReadings {
		// Too few rounds within three times the time limit (a machine starved of CPU): no
		// verdict either way.
		res.tooFew = true
		res.heap.conf, res.goroutines.conf = min(res.heap.conf, suspected), min(res.goroutines.conf, suspected)
	}
	return res
}

// judge judges the readings so far.
func (r *run) judge() (heap, gor growth) {
	hp := make([]trend.Point, len(r.readings))
	gp := make([]trend.Point, len(r.readings))
	for i, rd := range r.readings {
		hp[i] = trend.Point{At: rd.calls, V: rd.heap}
		gp[i] = trend.Point{At: rd.calls, V: rd.goroutines}
	}
	if r.cfg.heap {
		heap = judge(hp, r.cfg.minBytesPerCall, minHeapGrowth)
	}
	if r.cfg.goroutines {
		gor = judge(gp, r.cfg.minGoroutinesPerCall, minGoroutineGrowth)
	}
	return heap, gor
}

// size finds how many calls make a round, as testing.B sizes its loops: from one call, more
// each time by the time the last batch took, until a batch takes the round's time (the
// batches are the warm-up's first part). The time is the process's CPU time where it can be
// read: on a machine starved of CPU, the time a batch waits for one would make rounds too
// short (a cache that a round of 20 ms of work fills would take many). A batch that takes
// five rounds' time on the clock ends the sizing too: a function that waits (for the network,
// a timer) uses little CPU, and its rounds must not last seconds.
func (r *run) size() int64 {
	// The first call is often the slowest (lazy initialisation): it times nothing.
	r.callFn(1)
	r.warmup++
	n := int64(1)
	target := r.cfg.roundTime
	for {
		t0, c0 := time.Now(), cpuNow()
		r.callFn(n)
		r.warmup += n
		wall, cpu := time.Since(t0), time.Duration(-1)
		if c1 := cpuNow(); c0 >= 0 && c1 >= 0 {
			cpu = c1 - c0
		}
		if cpu < 0 { // no CPU time here: the clock's alone
			cpu = wall
		}
		if cpu >= target || wall >= wallRounds*target || n >= 1e9 || time.Since(r.start) >= r.cfg.timeLimit/4 || r.haltReason() != "" {
			return n
		}
		prev := n
		n = grow(n, cpu, target)
		n = min(n, grow(prev, wall, wallRounds*target))
		n = max(min(n, 100*prev), prev+1)
	}
}

// wallRounds is how many rounds' time a batch may take on the clock while it is sized.
const wallRounds = 5

// grow is the calls that would take target, by the time d that n calls took (with a fifth
// more, as testing.B predicts).
func grow(n int64, d, target time.Duration) int64 {
	if d <= 0 {
		return 100 * n
	}
	return int64(float64(n) * float64(target) * 1.2 / float64(d))
}

// The most a round may add, whatever fn leaks: a fast leak must not take the machine down
// before it is judged (a goroutine costs 2 KiB or more of stack).
const (
	maxRoundGoroutines = 2000
	maxRoundHeap       = 64 << 20
)

// bound lowers the calls per round so that what the warm-up leaked, per call, adds no more
// than the bounds per round.
func (r *run) bound(n int64, before, after reading) int64 {
	calls := float64(r.warmup)
	if g := (after.goroutines - before.goroutines) / calls; g > 0 && float64(n)*g > maxRoundGoroutines {
		n = int64(maxRoundGoroutines / g)
	}
	if h := (after.heap - before.heap) / calls; h > 0 && float64(n)*h > maxRoundHeap {
		n = int64(maxRoundHeap / h)
	}
	return max(n, 1)
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
