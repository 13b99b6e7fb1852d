package lab

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// AgentEnv is the environment variable that makes a scenario embed
// memdoctor's agent: with AgentEnv=1 the scenario also serves the agent's
// endpoints at /debug/memdoctor/ on its own server, so that the same
// scenario can be watched from the agent's vantage point
// (memdoctor watch finds them next to /debug/pprof/).
const AgentEnv = "MEMDOCTOR_LAB_AGENT"

// Scenario is one lab program: a small service that reproduces one production
// memory problem, and the diagnosis memdoctor must reach on it.
type Scenario struct {
	Name   string // kebab-case, e.g. "regexp-per-call"
	Story  string // one paragraph: the production story, the mechanism, and the fix
	Expect Expect
	// Run serves the scenario and drives its load until ctx is done, then
	// shuts down gracefully and returns. It returns an error only when the
	// scenario cannot start or its server fails.
	Run func(ctx context.Context, env Env) error
	// Holder, for a holder scenario, is the reference path memdoctor holders must name.
	Holder *HolderExpect
}

// Expect is what memdoctor must report when it watches a scenario.
type Expect struct {
	// Kinds are the finding kinds that must be reported at warning or
	// critical; empty for the healthy control.
	Kinds []string
	// Culprit is the fully qualified function, as pprof prints it, that must
	// be among the top 3 culprits of Kinds[0]; "" when the kind has no code
	// culprit.
	Culprit string
	// Line, when set, is the line of Culprit's source the finding must name: for goroutines
	// a library made for the program, the line of the program's call that made them.
	Line int64
	// Culprits names the culprit of each further kind of Kinds (kind ->
	// function, as Culprit), for a scenario with several problems each in
	// its own code; it must be among the top 3 culprits of that kind.
	Culprits map[string]string
	// Absent are the kinds that must not be reported at warning or above.
	Absent []string
	// Allowed are kinds that may be reported at warning besides Kinds
	// without counting against precision (a scenario built around an
	// allocation hotspot also makes the GC run often: gc-overhead is right).
	Allowed []string
	// Confirm is the window from which Kinds must be confirmed; before it a
	// suspected finding is the right verdict (a slow leak). 0 = from the
	// first window judged.
	Confirm time.Duration
	// Visible is the window from which Kinds must be found at all: before it the effect is
	// below what a window that short can show (the diagnosis says the slowest leak it would
	// see), and not finding it is no miss; a false warning still is. 0 = from the first
	// window judged.
	Visible time.Duration
	// Go127 marks a scenario whose evidence includes what only Go 1.27
	// serves (the goroutineleak profile): the accuracy matrix runs it from a
	// binary built with GOTOOLCHAIN=go1.27.0.
	Go127 bool
	// Env is extra environment for the scenario process ("KEY=value").
	Env []string
	// Budget is the --memory-budget to pass ("" = none).
	Budget string
	// Watch is how long memdoctor should watch to see the problem.
	Watch time.Duration
	// Interval is the profile snapshot interval to use.
	Interval time.Duration
}

// Env is where a scenario runs.
type Env struct {
	Addr   string       // listen address; default "127.0.0.1:0" (loopback only, always)
	Stdout io.Writer    // where the scenario prints its one-line status messages
	Logger *slog.Logger // may be nil
}

func (e Env) withDefaults() Env {
	if e.Addr == "" {
		e.Addr = "127.0.0.1:0"
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	return e
}

// Finding kinds, spelled as the diagnosis reports them.
const (
	kindHeapLeak          = "heap-leak"
	kindAllocationHotspot = "allocation-hotspot"
	kindGCOverhead        = "gc-overhead"
	kindRuntimeRetention  = "runtime-retention"
	kindTransientSpike    = "transient-spike"
	kindGoroutineLeak     = "goroutine-leak"
	kindNonGoMemory       = "non-go-memory"
	kindOOMRisk           = "oom-risk"
	kindCostGrowth        = "cost-growth"
)

// scenarios lists the constructors of every scenario. A constructor returns a
// fresh value each time, so callers of All and Lookup may modify what they get.
var scenarios = []func() Scenario{
	tcpReassembly,
	tcpReassemblyBudget,
	regexpPerCall,
	visitorContext,
	visitorStack,
	reflectHash,
	gzipReadAll,
	gatewayGC,
	madvfreeRetention,
	jsonWhole,
	goroutineLeak,
	nonGoMmap,
	healthy,
	trafficAgent,
	leakUnderSpikes,
	cacheWarmup,
	httpClientLeak,
	goroutineUnreachable,
	slowLeak,
	httpBodyLeak,
	sqlOpenLeak,
	rpcDialLeak,
	rareGCLeak,
	costClimb,
	sessionSprawl,
	exportOverLeak,
	patternCacheLeak,
	spanQueueLeak,
	dbOpenLeak,
	firmwareUpload,
	subscriberFlood,
	webhookLeak,
	spinLeak,
}

// pendingScenarios reproduce a production problem that some vantage point of the accuracy
// matrix does not judge right yet: they run (memdoctor lab run, go run ./bench/accuracy
// -scenarios NAME) but stay out of All, and so out of the matrix CI runs, until they are.
// None is, at present: spin-leak, the last, left on 2026-12-03 (docs/accuracy.md).
var pendingScenarios = []func() Scenario{}

// All returns every scenario, sorted by name.
func All() []Scenario {
	return made(scenarios)
}

// Pending returns the scenarios not yet in the accuracy matrix (pendingScenarios), sorted by
// name.
func Pending() []Scenario {
	return made(pendingScenarios)
}

// made makes a scenario of each constructor, sorted by name.
func made(ctors []func() Scenario) []Scenario {
	all := make([]Scenario, 0, len(ctors))
	for _, newScenario := range ctors {
		all = append(all, newScenario())
	}
	slices.SortFunc(all, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Lookup returns the scenario called name, a holder or pending scenario too.
func Lookup(name string) (Scenario, bool) {
	for _, s := range slices.Concat(All(), HolderScenarios(), Pending()) {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
