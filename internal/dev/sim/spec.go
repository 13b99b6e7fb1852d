package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Shape is what is wrong (or not) with a simulated service.
type Shape string

// The shapes.
const (
	Healthy         Shape = "healthy"           // steady state with noise
	HeapLeak        Shape = "heap-leak"         // 1 to 100 MiB/min
	Spikes          Shape = "spikes"            // periodic transient spikes
	LeakUnderSpikes Shape = "leak-under-spikes" // a leak under bigger spikes
	Warmup          Shape = "warmup"            // a cache that fills and plateaus
	GoroutineLeak   Shape = "goroutine-leak"    // 1 to 100 goroutines/s
	GCPressure      Shape = "gc-pressure"       // high allocation on a small heap
	Retention       Shape = "retention"         // free heap kept after spikes
	NonGo           Shape = "non-go"            // memory outside the Go runtime
	// LibraryGoroutineLeak: goroutines a library starts for the program pile up (an HTTP
	// client's connections whose response bodies are never closed, a client library's
	// workers never stopped), 1 to 100 goroutines/s, with no frame of the program in their
	// stacks.
	LibraryGoroutineLeak Shape = "library-goroutine-leak"
	// BusyLeak: a leak of 1 to 20 MiB/min at a busy site (a handler that keeps a little of
	// every request: it allocates hundreds of times what it keeps), watched for up to an
	// hour (WindowsOf).
	BusyLeak Shape = "busy-leak"
	// RareGCLeak: a leak of 20 to 120 MiB/min on a small heap with little garbage: the heap
	// multiplies in the window and, under GOGC, the GC runs more and more rarely (the next
	// cycle waits for the heap to double).
	RareGCLeak Shape = "rare-gc-leak"
	// CostClimb: one site's allocation climbs 4 to 8 times over the window under flat load
	// (each request serializes a backlog that grows): each request costs more and more.
	CostClimb Shape = "cost-climb"
	// SpreadLeak: a leak of 3 to 100 MiB/min kept a little at each of 3 to 5 sites that one
	// function of the program shares (a session middleware keeping every request's data:
	// the handler's, the store's, the registry's...), none of them a majority of it.
	SpreadLeak Shape = "spread-leak"
	// LeakUnderExports: a slow leak (10 to 100 MiB/min) under exports of 100 to 400 MiB
	// built over seconds every 10 to 20 s, with little other garbage: the GC runs inside the
	// exports, so most of its readings of the live heap hold one.
	LeakUnderExports Shape = "leak-under-exports"
	// SteadyHeapLeak: a library keeps 30 to 60 MiB a minute for the program (0.5 to 1 MB/s,
	// every second alike: a cache or registry in a dependency that is never pruned), its
	// allocation stack the library's frames under the program's call; a service that makes
	// garbage as it serves (a GC every 1.5 to 3 s), watched 1 to 2 minutes after its start.
	SteadyHeapLeak Shape = "steady-heap-leak"
	// SteadyGoroutineLeak: 15 to 25 goroutines a second that a library starts for the
	// program's calls pile up, every one parked at the same library function, with no frame
	// of the program in their stacks.
	SteadyGoroutineLeak Shape = "steady-goroutine-leak"
	// SpinGoroutineLeak: 1 to 20 goroutines a second pile up that never block (a poll loop
	// with a zero period): each goroutine profile catches them running or preempted at
	// whatever line of their loop, never parked.
	SpinGoroutineLeak Shape = "spin-goroutine-leak"
	// GoroutineFlood: a service of 100,000 to 500,000 goroutines that leaks 100 to 1,000 more
	// a second, each holding little heap; every goroutine profile memdoctor asks for makes it
	// record every stack (about 100 bytes a goroutine, in use while the request is served,
	// and growing with the goroutines), which a GC running meanwhile finds live: the
	// observer's own reads, never a culprit.
	GoroutineFlood Shape = "goroutine-flood"
	// BurstsInGC: no leak, little steady traffic (64 KiB to 1 MiB/s of garbage on a heap of
	// 1 to 16 MiB) and a body of 100 to 400 MiB read whole every 10 to 20 s, over half a
	// second to three seconds: the GC runs only inside the bursts (their own allocation reaches
	// the goal, each cycle finds part of the body still being read), and none runs after a
	// burst, so every reading of the live heap holds part of one and the readings may rise
	// from one to the next; whether the heap comes back is seen only when a GC happens to run
	// early in a burst.
	BurstsInGC Shape = "bursts-in-gc"
)

// Shapes lists every shape.
var Shapes = []Shape{Healthy, HeapLeak, Spikes, LeakUnderSpikes, Warmup, GoroutineLeak, GCPressure, Retention, NonGo,
	LibraryGoroutineLeak, BusyLeak, RareGCLeak, CostClimb, SpreadLeak, LeakUnderExports, SteadyHeapLeak, SteadyGoroutineLeak,
	SpinGoroutineLeak, GoroutineFlood, BurstsInGC}

// Vantage is where a session was recorded from.
type Vantage string

// The vantage points.
const (
	Run        Vantage = "run"         // memdoctor run: gctrace, /proc, profiles and MemStats
	WatchPprof Vantage = "watch-pprof" // memdoctor watch on net/http/pprof: /proc, MemStats, profiles
	WatchAgent Vantage = "watch-agent" // memdoctor watch on the agent: runtime/metrics + /proc, profiles
	Profiles   Vantage = "profiles"    // heap and goroutine profiles alone
	// Burst: 3 to 6 heap and goroutine profiles curl'd 0.5 to 2 s apart as the window ends,
	// too close together for a trend.
	Burst Vantage = "burst"
)

// Vantages lists every vantage point.
var Vantages = []Vantage{Run, WatchPprof, WatchAgent, Profiles, Burst}

// Windows are the window lengths of the accuracy matrix.
var Windows = []time.Duration{45 * time.Second, 60 * time.Second, 3 * time.Minute}

// longWindows are the windows of the shapes that take long to tell.
var longWindows = []time.Duration{3 * time.Minute, 20 * time.Minute, time.Hour}

// WindowsOf are the windows a shape is judged at: Windows, or for a busy leak, up to an hour.
func WindowsOf(s Shape) []time.Duration {
	if s == BusyLeak {
		return longWindows
	}
	return Windows
}

// AllWindows are the windows of every shape, shortest first.
var AllWindows = []time.Duration{45 * time.Second, 60 * time.Second, 3 * time.Minute, 20 * time.Minute, time.Hour}

// Spec says what to simulate; the seed draws everything else.
type Spec struct {
	Shape   Shape
	Vantage Vantage
	Window  time.Duration // the collection's length
	// Interval is the profile snapshot interval (watch --interval); 0 = memdoctor's default,
	// 10 s (the agent's 10 or 15 s). The burst vantage point keeps its own.
	Interval time.Duration
}

// Finding kinds, spelled as the diagnosis reports them.
const (
	KindHeapLeak          = "heap-leak"
	KindGoroutineLeak     = "goroutine-leak"
	KindRuntimeRetention  = "runtime-retention"
	KindTransientSpike    = "transient-spike"
	KindGCOverhead        = "gc-overhead"
	KindAllocationHotspot = "allocation-hotspot"
	KindNonGoMemory       = "non-go-memory"
	KindOOMRisk           = "oom-risk"
	KindMemoryGrowth      = "memory-growth"
	KindCostGrowth        = "cost-growth"
)

// Kinds lists every finding kind.
var Kinds = []string{KindHeapLeak, KindGoroutineLeak, KindRuntimeRetention, KindTransientSpike,
	KindGCOverhead, KindAllocationHotspot, KindNonGoMemory, KindOOMRisk, KindMemoryGrowth, KindCostGrowth}

// Truth is what a diagnosis of a generated session must say.
type Truth struct {
	// Kinds must be reported at warning or above.
	Kinds []string
	// Culprits maps a kind of Kinds to the function that must be among its top 3 culprits;
	// kinds without a code culprit have no entry.
	Culprits map[string]string
	// Lines maps a kind of Culprits to the line its culprit must be named at, when one is
	// known (a library's goroutines: the program's call that made them).
	Lines map[string]int64
	// Absent kinds must not be reported at warning or above. Kinds in neither list may go
	// either way (a spike that also leaves retained memory, say).
	Absent []string
	// Unobservable kinds are present but the vantage point cannot see them (memory outside
	// Go from profiles alone): they count neither as found nor as missed.
	Unobservable []string
	// Suspect are the kinds of Kinds that are right when found suspected, at info, with their
	// culprit: profiles too close together for a trend can prove nothing.
	Suspect []string
	// Band groups sessions of one shape by how hard they are ("slow", "medium", "fast"
	// for rates; "" when the shape has no such scale).
	Band     string
	Params   Params
	Observed Observed
}

// Params are the drawn parameters of a simulated service, in bytes, seconds and counts.
type Params struct {
	Seed       uint64
	GOGC       int
	GOMAXPROCS int
	MemLimit   float64 // GOMEMLIMIT; 0 = unset
	Uptime     float64 // how long the process ran before the window
	Window     float64

	BaseLive    float64 // the steady live heap
	AllocRate   float64 // background allocation, bytes/s
	UserCores   float64 // CPU the program's own work uses
	MarkRate    float64 // bytes marked per CPU-second
	NoiseFrac   float64 // relative size of the live heap's wander
	Goroutines  int     // the steady goroutine count
	StackBytes  float64 // average stack per goroutine
	Globals     float64
	Frag        float64 // heap/unused as a fraction of heap/objects
	Trigger     float64 // where the trigger sits between live and goal (45/64 to 61/64)
	ScavRate    float64 // bytes/s the background scavenger returns
	BinaryBytes float64 // the binary's resident file pages

	LeakRate float64 // heap leak, bytes/s
	// LeakSites is, for a leak spread over sites, each one's share of it (nil: one site).
	LeakSites []float64
	// LeakLibrary: the leak's allocation stack is a library's, under the program's call.
	LeakLibrary bool
	// LeakBusy is, for a busy leak, the share of the background allocation that the leaking
	// site makes (what it keeps is LeakRate of it).
	LeakBusy float64
	// CostBase is, for a cost climb, what the climbing site allocates at the window's start
	// (bytes/s); CostClimb how many times that it allocates at the end.
	CostBase, CostClimb float64

	SpikePeriod float64 // s
	SpikeHeight float64 // bytes live at the top of a spike
	SpikeHold   float64 // s the spike's data stays live
	SpikeRise   float64 // s to allocate it
	SpikePhase  float64 // s from process start to the first spike
	EndMidSpike bool

	WarmSize   float64 // bytes the cache holds when full
	WarmTime   float64 // s from start to full
	WarmLinear bool    // linear fill (else saturating)
	WarmChurn  float64 // bytes/s of evicted entries once full

	GoroutineLeakRate float64 // goroutines/s
	PerGoroutineHeap  float64 // heap kept by each leaked goroutine
	// Library is, for a library's goroutines, which of libraryLeakPool (from 1; 0 = the
	// program's own goroutines leak).
	Library int
	// CallsPerLeak and CallBytes: the program calls the library this many times for each
	// goroutine that leaks (a failed call leaks, the others not), each call allocating
	// CallBytes of garbage through the same path.
	CallsPerLeak, CallBytes float64
	// Creators: the goroutine profiles record which function started the library's
	// goroutines, as memdoctor's reads of a process's memory do (the runtime's own profiles
	// record none): half the library-goroutine services.
	Creators bool

	// Spin: the leaked goroutines never block (SpinGoroutineLeak).
	Spin bool
	// Observer: the spikes are memdoctor's own goroutine profiles served by the program, each
	// as tall as SpikeHeight times the goroutines over Goroutines (GoroutineFlood).
	Observer bool

	// RetentionMode is "batches" (periodic) or "once": a batch job's working set freed with
	// debug.FreeOSMemory under GODEBUG=madvdontneed=0; "" for the other shapes.
	RetentionMode string
	// FreeOSMemoryTook is how long (s) debug.FreeOSMemory takes to release what its GC freed
	// (its madvise calls, longer on a busy machine): a reading in between sees the batch's
	// pages as free heap, not yet LazyFree. 0 = at once.
	FreeOSMemoryTook float64

	NonGoBase float64 // bytes outside Go from the start
	NonGoRate float64 // bytes/s more

	ProfileInterval float64 // s
	// BurstN profiles of each kind BurstStep seconds apart, for the burst vantage point.
	BurstN    int
	BurstStep float64
}

// draw draws the parameters of one service.
func draw(seed uint64, spec Spec) (Params, error) {
	if !slices.Contains(Shapes, spec.Shape) {
		return Params{}, fmt.Errorf("sim: unknown shape %q", spec.Shape)
	}
	if !slices.Contains(Vantages, spec.Vantage) {
		return Params{}, fmt.Errorf("sim: unknown vantage point %q", spec.Vantage)
	}
	if spec.Window < 10*time.Second || spec.Window > time.Hour {
		return Params{}, fmt.Errorf("sim: window %v: want 10s to 1h", spec.Window)
	}
	r := rand.New(rand.NewPCG(seed, hashSpec(spec)))
	p := Params{
		Seed:            seed,
		Window:          spec.Window.Seconds(),
		GOMAXPROCS:      []int{2, 4, 8}[r.IntN(3)],
		GOGC:            100,
		BaseLive:        logUniform(r, 8<<20, 96<<20),
		UserCores:       uniform(r, 0.15, 1.2),
		MarkRate:        logUniform(r, 400<<20, 1536<<20),
		NoiseFrac:       uniform(r, 0.005, 0.03),
		Goroutines:      10 + r.IntN(80),
		StackBytes:      float64([]int{4, 8, 8, 16}[r.IntN(4)] << 10),
		Globals:         uniform(r, 0.2, 2) * (1 << 20),
		Frag:            uniform(r, 0.02, 0.08),
		Trigger:         uniform(r, 50.0/64, 59.0/64),
		ScavRate:        logUniform(r, 40<<20, 200<<20),
		BinaryBytes:     uniform(r, 6, 24) * (1 << 20),
		ProfileInterval: 10,
	}
	if r.IntN(4) == 0 {
		p.GOGC = []int{50, 200}[r.IntN(2)]
	}
	if spec.Vantage == WatchAgent && r.IntN(2) == 0 {
		p.ProfileInterval = 15
	}
	if spec.Vantage != Run {
		p.Uptime = uniform(r, 5, 60)
		if spec.Shape == SteadyHeapLeak {
			p.Uptime = uniform(r, 60, 120) // a service watched while it runs, past its warm-up
		}
	}
	if spec.Interval > 0 {
		p.ProfileInterval = spec.Interval.Seconds()
	}
	if spec.Vantage == Burst {
		p.BurstN, p.BurstStep = 3+r.IntN(4), uniform(r, 0.5, 2)
		p.ProfileInterval = p.BurstStep
	}
	// A healthy background: GC takes well under 5% of the process's CPU. GC CPU per second is
	// about A x 100/GOGC / markRate, so A stays below a tenth of what would make it 5%.
	p.AllocRate = math.Max(1<<20, uniform(r, 0.1, 0.6)*0.05*p.UserCores*p.MarkRate*float64(p.GOGC)/100)

	switch spec.Shape {
	case HeapLeak:
		p.LeakRate = logUniform(r, 1, 100) * (1 << 20) / 60
	case SpreadLeak:
		p.LeakRate = logUniform(r, 3, 100) * (1 << 20) / 60
		var total float64
		for range 3 + r.IntN(3) {
			w := uniform(r, 0.5, 1)
			p.LeakSites = append(p.LeakSites, w)
			total += w
		}
		for i := range p.LeakSites {
			p.LeakSites[i] /= total
		}
	case LeakUnderExports:
		p.BaseLive = logUniform(r, 8<<20, 32<<20)
		p.AllocRate = logUniform(r, 256<<10, 2<<20) // little else: the GC runs inside the exports
		p.LeakRate = logUniform(r, 10, 100) * (1 << 20) / 60
		bigBursts(r, &p, 1.5, 4, 0.2, 1)
	case BurstsInGC:
		p.BaseLive = logUniform(r, 1<<20, 16<<20)
		p.AllocRate = logUniform(r, 64<<10, 1<<20)
		bigBursts(r, &p, 0.5, 3, 0.05, 0.5)
	case SteadyHeapLeak:
		p.LeakRate = uniform(r, 30, 60) * (1 << 20) / 60
		p.LeakLibrary = true
		// A service that makes garbage as it serves: the GC runs every 1.5 to 3 s, and each
		// cycle reads the live heap.
		p.AllocRate = math.Max(p.AllocRate, (p.BaseLive+p.LeakRate*p.Uptime)/uniform(r, 1.5, 3))
	case Spikes, LeakUnderSpikes:
		p.SpikePeriod = uniform(r, 8, 30)
		p.SpikeHeight = math.Max(logUniform(r, 40<<20, 400<<20), 1.5*p.BaseLive)
		p.SpikeHold = uniform(r, 0.3, 4)
		p.SpikeRise = uniform(r, 0.1, 1.5)
		p.SpikePhase = uniform(r, 0, p.SpikePeriod)
		if spec.Shape == LeakUnderSpikes {
			p.LeakRate = logUniform(r, 3, 150) * (1 << 20) / 60
			// The spikes are bigger than what the leak adds in a period.
			p.SpikeHeight = math.Max(p.SpikeHeight, 2*p.LeakRate*p.SpikePeriod)
		}
		p.EndMidSpike = r.IntN(4) == 0
		if p.EndMidSpike {
			// Place a spike's top at the window's end: the window ends during it.
			end := p.Uptime + p.Window
			into := uniform(r, 0.2, 0.8) * (p.SpikeRise + p.SpikeHold)
			p.SpikePhase = math.Mod(end-into, p.SpikePeriod)
		}
	case Warmup:
		p.Uptime = math.Min(p.Uptime, uniform(r, 1, 4)) // watch attaches right after the deploy
		p.WarmSize = logUniform(r, 50<<20, 200<<20)
		p.WarmTime = uniform(r, 0.15, 0.55) * p.Window
		p.WarmLinear = r.IntN(3) == 0
		p.WarmChurn = uniform(r, 0.002, 0.02) * p.WarmSize
	case CostClimb:
		p.CostBase = uniform(r, 0.2, 1) * p.AllocRate
		p.CostClimb = logUniform(r, 4, 8)
	case RareGCLeak:
		p.LeakRate = logUniform(r, 20, 120) * (1 << 20) / 60
		p.BaseLive = logUniform(r, 4<<20, 16<<20)
		p.AllocRate = uniform(r, 0.1, 0.5) * p.LeakRate
	case BusyLeak:
		p.LeakRate = logUniform(r, 1, 20) * (1 << 20) / 60
		p.LeakBusy = uniform(r, 0.3, 0.8)
	case SpinGoroutineLeak:
		p.GoroutineLeakRate = logUniform(r, 1, 20)
		p.PerGoroutineHeap = logUniform(r, 512, 8<<10)
		p.Spin = true
	case GoroutineFlood:
		p.Goroutines = int(logUniform(r, 100000, 500000))
		p.GoroutineLeakRate = logUniform(r, 100, 1000)
		p.PerGoroutineHeap = uniform(r, 48, 160)
		p.StackBytes = 2 << 10 // parked at their first frames
		// The goroutine profiles memdoctor asks for (run, watch over pprof, the profiles
		// alone): the profile's records, about 100 bytes a goroutine, live for the request.
		if spec.Vantage != WatchAgent {
			p.Observer = true
			p.SpikePeriod = p.ProfileInterval
			p.SpikeHeight = uniform(r, 80, 130) * float64(p.Goroutines)
			p.SpikeRise = uniform(r, 0.05, 0.3)
			p.SpikeHold = uniform(r, 0.3, 3)
			p.SpikePhase = uniform(r, 0, p.SpikePeriod)
		}
	case GoroutineLeak, LibraryGoroutineLeak, SteadyGoroutineLeak:
		p.GoroutineLeakRate = logUniform(r, 1, 100)
		if spec.Shape == SteadyGoroutineLeak {
			p.GoroutineLeakRate = uniform(r, 15, 25)
		}
		p.PerGoroutineHeap = logUniform(r, 512, 8<<10)
		if spec.Shape != GoroutineLeak {
			p.Library = 1 + r.IntN(len(libraryLeakPool))
			p.CallsPerLeak = uniform(r, 1, 10)
			p.CallBytes = logUniform(r, 1<<10, 16<<10)
			p.Creators = r.IntN(2) == 0
		}
	case GCPressure:
		p.GOGC = int(logUniform(r, 25, 400))
		p.BaseLive = logUniform(r, 8<<20, 64<<20)
		p.AllocRate = logUniform(r, 50<<20, 400<<20)
		p.UserCores = math.Min(float64(p.GOMAXPROCS)*0.6, uniform(r, 0.5, 1.5))
	case Retention:
		// Batches that build a large working set, drop it and call debug.FreeOSMemory, under
		// GODEBUG=madvdontneed=0: the pages go back with MADV_FREE and stay resident.
		p.RetentionMode = []string{"batches", "once"}[r.IntN(2)]
		p.SpikeHeight = logUniform(r, 150<<20, 400<<20)
		p.SpikeRise = uniform(r, 0.2, 1)
		p.SpikeHold = uniform(r, 0.5, 2)
		if p.RetentionMode == "batches" {
			p.SpikePeriod = uniform(r, 10, 20)
			p.SpikePhase = uniform(r, 0, p.SpikePeriod)
		} else {
			// One batch shortly before or early in the window.
			p.SpikePeriod = 1e9
			p.SpikePhase = math.Max(1, p.Uptime+uniform(r, -3, 0.2*p.Window))
		}
		p.FreeOSMemoryTook = uniform(r, 0.05, 1.5)
	case NonGo:
		if r.IntN(2) == 0 {
			p.NonGoBase = logUniform(r, 150<<20, 600<<20)
		} else {
			p.NonGoBase = logUniform(r, 20<<20, 80<<20)
			p.NonGoRate = logUniform(r, 1<<20, 10<<20)
		}
	}
	return p, nil
}

// hashSpec mixes a spec into the second PCG word, so that every cell of a matrix draws
// its own services from the same seeds.
func hashSpec(spec Spec) uint64 {
	h := uint64(14695981039346656037)
	keys := []string{string(spec.Shape), string(spec.Vantage), spec.Window.String()}
	if spec.Interval > 0 { // the matrix's cells draw what they drew before intervals were given
		keys = append(keys, spec.Interval.String())
	}
	for _, s := range keys {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return h
}

// bigBursts draws bursts of 100-400 MiB (at least four times the base) every 10-20 s, rising
// over riseLo-riseHi s and held holdLo-holdHi s, a quarter of the windows ending inside one.
func bigBursts(r *rand.Rand, p *Params, riseLo, riseHi, holdLo, holdHi float64) {
	p.SpikePeriod = uniform(r, 10, 20)
	p.SpikeHeight = math.Max(logUniform(r, 100<<20, 400<<20), 4*p.BaseLive)
	p.SpikeRise = uniform(r, riseLo, riseHi)
	p.SpikeHold = uniform(r, holdLo, holdHi)
	p.SpikePhase = uniform(r, 0, p.SpikePeriod)
	p.EndMidSpike = r.IntN(4) == 0
	if p.EndMidSpike {
		end := p.Uptime + p.Window
		into := uniform(r, 0.2, 0.8) * (p.SpikeRise + p.SpikeHold)
		p.SpikePhase = math.Mod(end-into, p.SpikePeriod)
	}
}

func uniform(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

func logUniform(r *rand.Rand, lo, hi float64) float64 {
	return math.Exp(uniform(r, math.Log(lo), math.Log(hi)))
}

// band names how hard a rate is to see.
func band(v, slow, fast float64) string {
	switch {
	case v < slow:
		return "slow"
	case v < fast:
		return "medium"
	}
	return "fast"
}
