package rule

import (
	"math"
	"time"
)

// Thresholds are every line the rules draw: how much growth matters, how sure a verdict must
// be, and what makes a finding a warning or critical. Default holds the values the accuracy
// matrix, the real programs and the simulator were judged with; a change to one is judged
// on them again (DEVELOPERS.md).
type Thresholds struct {
	Trend         Trend
	HeapLeak      HeapLeak
	GoroutineLeak GoroutineLeak
	Retention     Retention
	Spike         Spike
	GC            GC
	Hotspot       Hotspot
	NonGo         NonGo
	OOM           OOM
	Memory        Memory
	Cost          Cost
	Culprits      Culprits
}

// Limits says what growth of a quantity matters.
type Limits struct {
	MinAbs float64 // in the quantity's unit
	MinRel float64 // of the starting level
	// MaxAbs, when not 0, caps what MinRel asks of a large starting level: a growth this large
	// matters whatever it started from (10,000 more goroutines pin at least 24 MiB of stacks
	// and g structs, on a service of 100,000 as on one of 100).
	MaxAbs float64
	// MinSpan is the least span a growth is judged over as a trend. It is not what the
	// statistics need (the sequential boundary of Trend is), but what a rise over a shorter
	// span may be besides a leak: data or requests in flight through a burst, a cache filling
	// after a start (the lab's cache-warmup adds 60 MiB in its first 15 s, and is read as a
	// leak from its first 15 s without it). Readings over less are compared first to last, as
	// profiles curl'd in a burst.
	MinSpan time.Duration
}

// Trend says what "grows for good" means: the growth is large enough to matter (a Limits),
// rises consistently (Kendall's tau and Mann-Kendall's test), is still rising at the end
// (not a warm-up that levels off), and is seen over enough readings. A large, monotone rise
// over few readings is a finding; a small drift over many is not. The same for every vantage
// point: a series of 6 readings and one of 600 are judged by the same effect and the same
// consistency, only with the confidence their length allows.
type Trend struct {
	// FalseAlarm is the stated false-alarm rate of the consistency a confirmed growth needs:
	// the chance that readings with no trend (any order of them as likely as any other) are
	// ever found consistent, however often they are judged as they come in (a watch
	// --until-confirmed judges its session every interval and stops at the first
	// confirmation). The boundary below holds it (sequential.go; TestSequentialFalseAlarm
	// looks after every reading); the effect size and the still-rising test stand against
	// what readings can do that is not noise (a warm-up, a burst).
	FalseAlarm float64
	// The boundary: Mann-Kendall's one-sided p-value over n readings must be at most
	// Boundary[n-MinConfirmPoints] (its last level from there on), with Kendall's tau at
	// least ConfirmTau. Fewer than MinConfirmPoints readings never confirm. The first levels
	// are the exact p-values of five readings that only rise (1/120: the least five can
	// give), six with one pair out of order (6/720) and seven with two (27/5040): what a
	// level of 0.01 at every look let through; from eight readings on, 0.005, half that
	// level, since each look is one more chance.
	MinConfirmPoints int
	Boundary         []float64
	ConfirmTau       float64
	// ConfirmSNR: a confirmed growth also stands this far above the readings' scatter around
	// the trend (a consistent rise of a few quanta in a noisy floor is a suspicion), unless
	// it only ever rose.
	ConfirmSNR float64
	// SuspectP and SuspectTau: the least consistency a suspected growth needs.
	SuspectP, SuspectTau float64
	// LateRising and LateSlowing: the slope over the last third of the window, against the
	// whole window's, that counts as still rising, and below which a growth has levelled off.
	LateRising, LateSlowing float64
	// MinLateShare: a growth still going on made at least this share of itself in the
	// window's second half (a steady leak makes half); LateSlowingShare: a growth still
	// slowing made at least this share, below which it has stopped (a plateau whose wiggle
	// reads as a slope).
	MinLateShare, LateSlowingShare float64
	// ProjectHorizon: a consistent growth still below the effect size is suspected when it
	// would reach it within this (or within the window's length, if longer), and has already
	// come at least ProjectMinShare of the way.
	ProjectHorizon  time.Duration
	ProjectMinShare float64
	// ProjectConfirm: a growth below the effect size in bytes or goroutines, but past its
	// share of the starting level (Limits.MinRel), consistent by the boundary as a confirmed
	// growth is, that only ever rose or stands clear of its scatter, and still rising, is
	// confirmed when at its rate it would reach the effect size within this share of the
	// span it was seen over: a steady rise watched for a minute is no less sure for being a
	// few goroutines short of the line, and its rate, not its size so far, is the finding (a
	// slow goroutine leak, 10 -> 36 in 45 s, stayed "suspected, watch 5 s more" look after
	// look).
	ProjectConfirm float64
}

// HeapLeak: the live heap's floor that grows for good.
type HeapLeak struct {
	Limits Limits
	// InFlightTurnover: a site that allocated this many times what it holds over the window
	// replaces its memory again and again; what it holds when a GC runs is what was in flight
	// then (request bodies, buffers), not what it keeps. A leaking site keeps most of what it
	// allocates (a growing slice's copies make it allocate two or three times what it holds).
	InFlightTurnover float64
	// InFlightMajority: a growth mostly (this share of it) made by such sites is in flight.
	InFlightMajority float64
	// InFlightFadeSpan and InFlightFadeReadings: that doubt holds only for a growth seen over
	// less than this span and through fewer than this many distinct readings of the live heap
	// (each a GC). What is in flight at a GC piles up while a server falls behind a burst of
	// load, for minutes (the busy machine's gzip-readall: six heap profiles rising over a
	// minute); a rise held through every GC for ten minutes, or through thirty GCs in a row
	// (a chance rise of thirty draws is out of the question), is kept memory, however much its
	// sites also allocate.
	InFlightFadeSpan     time.Duration
	InFlightFadeReadings int
	// CriticalWithin: a confirmed leak that reaches the memory budget sooner is critical.
	CriticalWithin time.Duration
	// HeldPerGoroutine: heap growth up to this much per goroutine a leak added is what those
	// goroutines hold (a request, a connection's buffers, a result they never hand over).
	HeldPerGoroutine float64
	// SlowGC: a target whose GC runs this seldom or less makes a verdict on its live heap
	// wait on its cycles (one reading each): the diagnosis says how often they come.
	SlowGC time.Duration
}

// GoroutineLeak: goroutines that pile up.
type GoroutineLeak struct {
	Limits Limits
	// ProvenWarn: this many goroutines proved leaked is worth a warning on its own.
	ProvenWarn float64
	// CriticalPerMinute: goroutines per minute from which a confirmed leak is critical.
	CriticalPerMinute float64
	// PileUpShare and PileUpCount: what makes one blocked site a suspected pile-up in a single
	// goroutine profile. A pile-up grows without bound, so by the time someone takes a profile
	// it outnumbers everything else, while a service's steady goroutines (listeners, workers,
	// connections, tickers) spread over many sites: one blocked site of the program's own code
	// holding half of all goroutines is out of the ordinary. Fewer than 100 are left alone:
	// that is what fixed pools and small services hold (a pyroscope client keeps 5 of its 10
	// goroutines in one worker loop), and their stacks hold under a MiB. A large idle worker
	// pool can still dominate: one profile cannot tell it from a pile-up, so the finding is
	// only suspected and says how to tell.
	PileUpShare float64
	PileUpCount int
	// CensusProfiles and CensusShare: a count that only ever rose is consistent, however few
	// its readings, when at least CensusProfiles periodic goroutine profiles show one site (the
	// same stack, the same go statement) with more goroutines in each than in the one before,
	// and that site made at least CensusShare of the count's growth. Goroutine profiles taken
	// every 20 s give four counts a minute, short of the five whose order alone crosses the
	// boundary (four that only rise: 1/24, not 1/120); each profile is a census by stack,
	// though, and one stack climbing through every one of them while the rest of the
	// goroutines come and go around it is a second witness to the order: requests, pools and
	// warm-ups spread over sites, and rise and fall between profiles 20 s apart. A slow leak
	// (10 -> 36 goroutines in 45 s) seen only through such profiles stayed suspected. The
	// census is also taken of every goroutine started in the growing site's start function:
	// goroutines that run (spin, or work) are caught at another line in each profile. A
	// count whose other goroutines came and went around the rise (its order alone short of
	// the boundary) is confirmed when the census, a count that only ever rose, crosses the
	// boundary on its own (five or more profiles): a spinning leak's seven profiles counted
	// 191 -> 345 with two falls, the goroutines started in its loop 65 -> 287 in every one.
	CensusProfiles int
	CensusShare    float64
	// SpinShare: the goroutines that made a rise spin when at least this share of those
	// started in its start function were caught running or runnable (never parked) by the last
	// periodic goroutine profile. Goroutines that spin take the CPU from the service that makes
	// them: it serves fewer requests, and leaks more slowly, as they pile up, so their count
	// rises more slowly at the end, which for a count of parked goroutines says a pool warming
	// up, levelling off. A pool waiting for work, or a leak blocked for good, is caught parked
	// (none running); spin-leak's spinners were caught running or runnable in 19-57% of them in
	// fifteen recordings (pprof, the agent, the process's memory), the rest at a function's
	// entry, where a goroutine profile cannot tell a spinning goroutine from one that runs.
	// The limit: goroutines that compute rather than spin are caught running too, so a pool
	// of busy workers still climbing at the end of the window, more slowly, is confirmed as a
	// leak where a parked one would be suspected (its growth must still be material and
	// consistent).
	SpinShare float64
}

// Retention: resident memory the runtime or the kernel keeps though it is free.
type Retention struct {
	MinBytes float64
	MinShare float64 // of RSS
	// MinPresent: the share of the splits (from the first that shows it) that must show it.
	MinPresent float64
	// MinReadings: fewer splits (from the first that shows it) make it a suspicion.
	MinReadings int
	// MinSpan: free heap first kept after the window's start must have been kept this long
	// (from its first split to the window's end) to be told; three splits that show it over
	// this long confirm it, however few they are.
	MinSpan time.Duration
}

// Spike: bursts of short-lived allocation.
type Spike struct {
	// MinExplained: the excess allocation between the snapshots around the spikes must reach
	// this share of their height for the spikes to count as bursts of allocation.
	MinExplained float64
	// WarnHeight: a spike this high is a warning, and so is one WarnDoubled high that at
	// least doubles its floor.
	WarnHeight, WarnDoubled float64
	// CriticalOfBudget: a spike whose heap reaches this share of the budget is critical.
	CriticalOfBudget float64
	// SparseStep: live heap readings this far apart cannot see bursts shorter than that.
	SparseStep time.Duration
}

// GC: a GC that runs often and costs CPU.
type GC struct {
	MinRate  float64 // cycles per second
	BusyRate float64 // cycles per second: each pauses the program and turns on the write barrier
	MinCPU   float64 // of all CPU, with MinRate
	AloneCPU float64 // of all CPU, at any rate
	WarnCPU  float64
	// AssistWarn: a GC whose mark assists take this share of its CPU, at MinRate, is a warning.
	AssistWarn  float64
	TargetRate  float64 // what the advice aims for, at most, in cycles per second
	TargetShare float64 // ... or this share of the current rate, whichever is lower
	BudgetUse   float64 // the advice keeps RSS under this share of the budget
	MaxGOGC     float64
	// MinCores: below this much CPU (cores), a GC that also runs less than MinRate times a
	// second costs nothing worth tuning. It is kept low: the GC's share of the process's CPU
	// is what does not depend on the load or the machine's speed.
	MinCores float64
	// ContentionError is how far off the measured CPU contention may be (as a share of the
	// runnable time): the threads' waits are sampled with the process's CPU, not with each GC.
	ContentionError float64
	// MinCycles and MinSpan: a GC rate measured over fewer cycles, or a shorter span, is a
	// suspicion.
	MinCycles uint64
	MinSpan   time.Duration
}

// Hotspot: sites that dominate allocation, judged on what they cost, not on how much is
// allocated: a busy, healthy server allocates a lot. A site's cost is its share of the bytes
// allocated times the GC's share of the process's CPU (the GC's work is in proportion to
// allocation), with mark assists, which stall the allocating goroutines, counted again.
type Hotspot struct {
	MinSpan   time.Duration // between the snapshots compared
	MinShare  float64
	WarnShare float64
	// InfoCost and WarnCost: the share of the process's CPU that the top site's allocations
	// cost in GC work, from which it is reported, and warned about.
	InfoCost, WarnCost float64
	// KnownCost: the warning threshold for a known anti-pattern (a regexp compiled per call,
	// reflection, whole documents decoded): it burns CPU beyond the GC's (compiling,
	// reflecting, decoding), which a heap profile does not show, and its fix is known.
	KnownCost float64
	// SmallObject: below this average size (bytes), object count drives the GC cost.
	SmallObject int64
}

// NonGo: resident anonymous memory the Go runtime does not account for.
type NonGo struct {
	MinBytes float64
	MinShare float64 // of RSS
	Growth   Limits  // a growth of it that is a leak outside Go
}

// OOM: a process that will reach its memory budget.
type OOM struct {
	Near, Critical float64 // of the budget
	// Horizon: a trend reaching the budget within this is a risk; within WakeUp, critical.
	Horizon, WakeUp time.Duration
	Growth          Limits
}

// Memory: resident memory that grows for good, or rose steeply and stayed.
type Memory struct {
	// Limits: half again what it was (a process warming up to its steady state grows too,
	// by less), and 32 MiB.
	Limits Limits
	// WarmupLive: a growth mostly of garbage, with the live heap under this share of it, is
	// the heap in use rising to its GC goal: a warm-up.
	WarmupLive float64
	// StepMinRatio and StepMinBytes: a step of resident memory said though it stopped rising
	// is three times where it started, and a quarter GiB more. A service warming a cache or
	// its pools grows by less; one that buffers requests whole can reach a GiB in seconds.
	StepMinRatio float64
	StepMinBytes float64
}

// Cost: an allocation rate that climbs steadily.
type Cost struct {
	Limits Limits
	// WarnGCRatio: a confirmed climb whose GC rate rose this many times over, to half of
	// GC.MinRate or more, is a warning.
	WarnGCRatio float64
	// WarnRatio and WarnConcentration: a confirmed climb to WarnRatio times its starting rate
	// within the window (the program's, or its top site's own) is a warning when it is
	// concentrated at its top site (that site's rate rose WarnConcentration times as many
	// times over as the rest of the program's, or more). More traffic raises every site alike; each request costing three times more
	// within minutes at one site is a defect (a backlog serialized or copied whole on every
	// request), whatever the GC makes of it yet.
	WarnRatio, WarnConcentration float64
}

// Culprits: which sites a finding names.
type Culprits struct {
	// MinShare is the share below which culprits after the first are left out. Code outside
	// the program's own (runtime and standard library frames only) never is a culprit.
	MinShare float64
	// Max is how many a finding names.
	Max int
}

// Default are the thresholds memdoctor judges with.
var Default = Thresholds{
	Trend: Trend{
		FalseAlarm:       0.035,
		MinConfirmPoints: 5, Boundary: []float64{1.0 / 120, 6.0 / 720, 27.0 / 5040, 0.005}, ConfirmTau: 0.5,
		ConfirmSNR: 4,
		SuspectP:   0.2, SuspectTau: 0.3,
		LateRising: 0.5, LateSlowing: 0.15, MinLateShare: 0.25, LateSlowingShare: 0.05,
		ProjectHorizon: 5 * time.Minute, ProjectMinShare: 0.2, ProjectConfirm: 1.0 / 3,
	},
	HeapLeak: HeapLeak{
		Limits:           Limits{MinAbs: 4 << 20, MinRel: 0.10, MinSpan: 15 * time.Second},
		InFlightTurnover: 20, InFlightMajority: 2.0 / 3,
		InFlightFadeSpan: 10 * time.Minute, InFlightFadeReadings: 30,
		CriticalWithin:   time.Hour,
		HeldPerGoroutine: 64 << 10,
		SlowGC:           5 * time.Second,
	},
	GoroutineLeak: GoroutineLeak{
		Limits:     Limits{MinAbs: 30, MinRel: 0.3, MaxAbs: 10000, MinSpan: 10 * time.Second},
		ProvenWarn: 20, CriticalPerMinute: 1000,
		PileUpShare: 0.5, PileUpCount: 100,
		CensusProfiles: 4, CensusShare: 0.5, SpinShare: 0.1,
	},
	Retention: Retention{MinBytes: 64 << 20, MinShare: 0.30, MinPresent: 0.5, MinReadings: 5, MinSpan: 15 * time.Second},
	Spike: Spike{
		MinExplained: 0.25, WarnHeight: 64 << 20, WarnDoubled: 32 << 20, CriticalOfBudget: 0.8,
		SparseStep: 5 * time.Second,
	},
	GC: GC{
		MinRate: 2.0, BusyRate: 5.0, MinCPU: 0.05, AloneCPU: 0.15, WarnCPU: 0.10, AssistWarn: 0.25,
		TargetRate: 1.0, TargetShare: 0.1, BudgetUse: 0.9, MaxGOGC: 10000,
		MinCores: 0.01, ContentionError: 0.1,
		MinCycles: 10, MinSpan: 10 * time.Second,
	},
	Hotspot: Hotspot{
		MinSpan: 10 * time.Second, MinShare: 0.15, WarnShare: 0.25,
		InfoCost: 0.02, WarnCost: 0.06, KnownCost: 0.03, SmallObject: 256,
	},
	NonGo: NonGo{MinBytes: 32 << 20, MinShare: 0.20, Growth: Limits{MinAbs: 32 << 20, MinRel: 0.2, MinSpan: 10 * time.Second}},
	OOM: OOM{
		Near: 0.90, Critical: 0.95, Horizon: 24 * time.Hour, WakeUp: time.Hour,
		Growth: Limits{MinAbs: 16 << 20, MinRel: 0.05, MinSpan: 20 * time.Second},
	},
	Memory: Memory{
		Limits:       Limits{MinAbs: 32 << 20, MinRel: 0.5, MinSpan: 15 * time.Second},
		WarmupLive:   0.1,
		StepMinRatio: 3, StepMinBytes: 256 << 20,
	},
	Cost: Cost{
		Limits:      Limits{MinAbs: 8 << 20, MinRel: 0.5, MinSpan: 20 * time.Second},
		WarnGCRatio: 1.5, WarnRatio: 3, WarnConcentration: 2,
	},
	Culprits: Culprits{MinShare: 0.01, Max: 5},
}

// rel is the growth MinRel asks of a starting level, capped at MaxAbs when it is set.
func (l Limits) rel(first float64) float64 {
	r := l.MinRel * math.Max(first, 0)
	if l.MaxAbs > 0 {
		r = math.Min(r, l.MaxAbs)
	}
	return r
}
