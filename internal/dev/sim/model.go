package sim

import (
	"math"
	"math/rand/v2"
)

const (
	mib          = 1 << 20
	heapMinimum  = 4 * mib    // the pacer's floor, at GOGC=100
	forcePeriod  = 120.0      // s: the runtime's periodic GC of an idle program
	maxStep      = 0.02       // s: the simulation's longest step
	minStep      = 1e-4       // s
	startRamp    = 1.0        // s the program takes to build its steady heap
	profileRate  = 512 << 10  // runtime.MemProfileRate's default
	inflightTime = 0.02       // s a request's garbage stays reachable
	nonGoCap     = 1024 * mib // the most memory outside Go a service maps
)

// parts are the components of the live heap at one instant, in bytes.
type parts struct {
	base, leak, spike, warm, gor float64
}

func (q parts) sum() float64 { return q.base + q.leak + q.spike + q.warm + q.gor }

// gcCycle is one GC cycle, with what its gctrace line prints.
type gcCycle struct {
	n                     int
	at                    float64 // s since process start
	forced                bool
	h0, h1, h2, goal      float64 // bytes
	stacks, globals       float64 // bytes
	cpuPercent            int
	clockSweep, clockMark float64 // s
	clockTerm             float64
	cpuSweep, cpuAssist   float64 // cpu-s
	cpuBackground         float64
	cpuIdle, cpuTerm      float64
	procs                 int
}

// model is one simulated Go process. Its clock t counts seconds since the process started.
type model struct {
	p     Params
	r     *rand.Rand
	sites *siteSet
	t     float64

	noise, allocNoise float64 // Ornstein-Uhlenbeck states, relative
	inflightNoise     float64
	cur               parts
	inflight          float64 // in-flight request goroutines

	objects, marked           float64 // heap/objects; live marked by the last GC
	goal, trigger             float64
	lastInUse, retainGoal     float64 // the scavenger's inputs
	free, released, lazy      float64 // heap pages: retained, returned, returned but resident (MADV_FREE)
	heapSys                   float64 // mapped heap: in use + free + released
	cycles, forced            int
	lastGCAt                  float64
	gcTotal, gcAssist, gcIdle float64 // cpu-s, as published at the end of the last cycle
	gcPause, user             float64
	allocBytes, allocObjects  float64
	hwm                       float64
	batchDone                 int // retention batches whose FreeOSMemory ran
	allocRate                 float64
	gcs                       []gcCycle
	freeOSMemoryAt            float64 // next FreeOSMemory, for the retention shape
	releasing, releaseRate    float64 // what FreeOSMemory has still to release, at bytes/s
}

func newModel(p Params, r *rand.Rand, sites *siteSet) *model {
	m := &model{p: p, r: r, sites: sites, retainGoal: math.Inf(1)}
	m.goal = heapMinimum * float64(p.GOGC) / 100
	m.trigger = m.goal * p.Trigger
	m.freeOSMemoryAt = math.Inf(1)
	if p.RetentionMode != "" {
		m.freeOSMemoryAt = p.SpikePhase + p.SpikeRise + p.SpikeHold
	}
	return m
}

// partsAt returns the live heap's components at time t (without the base's noise).
func (m *model) partsAt(t float64) parts {
	p := m.p
	q := parts{
		base: p.BaseLive * math.Min(1, t/startRamp) * (1 + m.noise),
		leak: p.LeakRate * t,
		gor:  p.GoroutineLeakRate * t * p.PerGoroutineHeap,
	}
	if p.SpikeHeight > 0 && t >= p.SpikePhase {
		since := math.Mod(t-p.SpikePhase, p.SpikePeriod)
		switch {
		case since < p.SpikeRise:
			q.spike = p.SpikeHeight * since / p.SpikeRise
		case since < p.SpikeRise+p.SpikeHold:
			q.spike = p.SpikeHeight
		}
		if p.Observer { // a goroutine profile's records: as many as there are goroutines
			q.spike *= (float64(p.Goroutines) + p.GoroutineLeakRate*t) / float64(p.Goroutines)
		}
	}
	if p.WarmSize > 0 {
		x := math.Min(1, t/p.WarmTime)
		if p.WarmLinear {
			q.warm = p.WarmSize * x
		} else {
			q.warm = p.WarmSize * (1 - math.Exp(-3*x)) / (1 - math.Exp(-3))
		}
	}
	return q
}

// goroutines is the goroutine count at the current time.
func (m *model) goroutines() int {
	return m.p.Goroutines + int(m.inflight) + int(m.p.GoroutineLeakRate*m.t)
}

func (m *model) stackBytes() float64 { return float64(m.goroutines()) * m.p.StackBytes }

// stackScan is the scannable stack the pacer counts: the used part of each stack.
func (m *model) stackScan() float64 { return float64(m.goroutines()) * m.p.StackBytes / 2 }

func (m *model) nonGo() float64 { return math.Min(m.p.NonGoBase+m.p.NonGoRate*m.t, nonGoCap) }

func (m *model) inUse() float64 { return m.objects * (1 + m.p.Frag) }

func (m *model) metadata() float64 { return 1.5*mib + 0.015*m.heapSys }

const otherBytes = 1468006.0

// total is /memory/classes/total.
func (m *model) total() float64 {
	return m.inUse() + m.free + m.released + m.stackBytes() + m.metadata() + otherBytes
}

// rssAnon and rss are what /proc/PID/status says.
func (m *model) rssAnon() float64 {
	return m.inUse() + m.free + m.lazy + m.stackBytes() + m.metadata() + otherBytes + m.nonGo() + 1.5*mib
}

func (m *model) rss() float64 { return m.rssAnon() + m.p.BinaryBytes }

// advance runs the model to time until.
func (m *model) advance(until float64) {
	for m.t < until-1e-9 {
		dt := math.Min(maxStep, until-m.t)
		if rate := m.allocRate; rate > 0 {
			dt = math.Min(dt, math.Max(minStep, (m.trigger-m.objects)/rate))
		}
		if next := m.freeOSMemoryAt; next > m.t && next < m.t+dt {
			dt = next - m.t
		}
		m.step(dt)
		if m.objects >= m.trigger {
			m.gc(false)
		} else if m.t-m.lastGCAt > forcePeriod {
			m.gc(false) // the periodic GC of an idle program (gctrace says "GC forced" apart)
		}
		if m.t >= m.freeOSMemoryAt-1e-9 {
			m.freeOSMemory()
		}
	}
}

// step advances the clock by dt: noise, allocation, heap pages, the scavenger, CPU.
func (m *model) step(dt float64) {
	p := m.p
	m.noise = ou(m.r, m.noise, p.NoiseFrac, 3, dt)
	m.allocNoise = ou(m.r, m.allocNoise, 0.15, 1, dt)
	m.inflightNoise = ou(m.r, m.inflightNoise, 1, 0.5, dt)
	mean := float64(p.Goroutines) * 0.1
	m.inflight = math.Max(0, mean+math.Sqrt(mean+1)*m.inflightNoise)
	m.t += dt
	next := m.partsAt(m.t)

	bg := p.AllocRate * math.Max(0.1, 1+m.allocNoise) * dt
	climb := m.climbRate() * math.Max(0.1, 1+m.allocNoise) * dt
	churn := 0.0
	if p.WarmSize > 0 && m.t >= p.WarmTime {
		churn = p.WarmChurn * dt // evicted entries replaced by new ones
	}
	grow := func(a, b float64) float64 { return math.Max(0, b-a) }
	alloc := bg + climb + churn + grow(m.cur.base, next.base) + grow(m.cur.leak, next.leak) +
		grow(m.cur.spike, next.spike) + grow(m.cur.warm, next.warm) + grow(m.cur.gor, next.gor)
	m.sites.allocate(m, m.cur, next, bg, churn, dt)
	m.sites.climbed(climb)
	if next.spike < m.cur.spike && next.spike == 0 {
		m.sites.spikeFreed()
	}
	m.cur = next
	m.allocRate = alloc / dt
	m.addObjects(alloc)
	m.scavenge(dt)
	if m.releasing > 0 {
		b := math.Min(math.Min(m.releasing, m.free), m.releaseRate*dt)
		m.release(b)
		if m.releasing -= b; m.free <= 0 {
			m.releasing = 0
		}
	}
	m.user += p.UserCores * dt
	m.hwm = math.Max(m.hwm, m.rss())
}

// climbRate is what the climbing site allocates now (bytes/s): from CostBase at the window's
// start to CostClimb times that at its end, steadily.
func (m *model) climbRate() float64 {
	p := m.p
	if p.CostBase <= 0 {
		return 0
	}
	f := clamp((m.t-p.Uptime)/p.Window, 0, 1)
	return p.CostBase * (1 + (p.CostClimb-1)*f)
}

// addObjects grows heap/objects, taking pages from the retained free pages first, then
// from the released ones (which fault back in), then from new mappings.
func (m *model) addObjects(b float64) {
	before := m.inUse()
	m.objects += b
	m.allocBytes += b
	m.allocObjects += b / 96
	need := m.inUse() - before
	take := math.Min(m.free, need)
	m.free -= take
	need -= take
	take = math.Min(m.released, need)
	m.released -= take
	m.lazy = math.Max(0, m.lazy-take) // reused lazily freed pages were resident all along
	need -= take
	m.heapSys += need
}

// scavenge returns retained free pages beyond the scavenger's goal, at its rate.
func (m *model) scavenge(dt float64) {
	excess := m.inUse() + m.free - m.retainGoal
	if excess <= 0 || m.free <= 0 {
		return
	}
	m.release(math.Min(math.Min(excess, m.free), m.p.ScavRate*dt))
}

func (m *model) release(b float64) {
	m.free -= b
	m.released += b
	if m.p.RetentionMode != "" { // GODEBUG=madvdontneed=0: MADV_FREE keeps the pages resident
		m.lazy += b
	}
}

// gc runs one cycle at the current time.
func (m *model) gc(forced bool) {
	p := m.p
	procs := float64(p.GOMAXPROCS)
	live := m.cur.sum()
	stacks, globals := m.stackScan(), p.Globals
	markCPU := (live+stacks+globals)/p.MarkRate + 2e-4
	spare := procs - p.UserCores - 0.25*procs
	idleFrac := clamp(spare/procs*0.6, 0, 0.6)
	bgWall := markCPU * (1 - idleFrac) / (0.25 * procs)
	gap := math.Max(m.goal-m.objects, 0)
	assistFrac := clamp(0.02+0.25*m.allocRate*bgWall/(gap+mib), 0.01, 0.5)
	assist, idle := assistFrac*markCPU, idleFrac*markCPU
	background := markCPU - assist - idle
	markWall := math.Max(3e-4, background/(0.25*procs))
	pause1, pause2 := uniform(m.r, 2e-5, 2e-4), uniform(m.r, 2e-5, 2e-4)

	during := m.allocRate * markWall // allocated while marking: marked live (allocate-black)
	h0 := m.objects
	m.addObjects(during)
	h1 := m.objects
	h2 := live + during
	m.lastInUse = m.inUse() // sampled before sweeping
	// Sweep: what was not marked becomes free pages.
	before := m.inUse()
	m.objects = h2
	m.free += before - m.inUse()
	m.marked = h2

	m.gcAssist += assist
	m.gcIdle += idle
	m.gcPause += (pause1 + pause2) * procs
	m.gcTotal += markCPU + (pause1+pause2)*procs
	m.cycles++
	if forced {
		m.forced++
	}
	thisGoal := m.goal
	m.goal = m.nextGoal(h2, stacks, globals)
	if m.cycles > 1 {
		m.retainGoal = 1.1 * m.goal / thisGoal * m.lastInUse
	}
	tau := clamp(p.Trigger+m.r.NormFloat64()*0.02, 45.0/64, 61.0/64)
	m.trigger = h2 + tau*(m.goal-h2)
	m.lastGCAt = m.t
	m.sites.gcSnapshot(m)

	m.gcs = append(m.gcs, gcCycle{
		n: m.cycles, at: m.t, forced: forced,
		h0: h0, h1: h1, h2: h2, goal: thisGoal, stacks: stacks, globals: globals,
		cpuPercent: int(100 * (m.gcTotal - m.gcIdle) / (procs * m.t)),
		clockSweep: pause1, clockMark: markWall, clockTerm: pause2,
		cpuSweep: pause1 * procs, cpuAssist: assist, cpuBackground: background, cpuIdle: idle, cpuTerm: pause2 * procs,
		procs: p.GOMAXPROCS,
	})
}

// nextGoal is the pacer's goal after a cycle that marked live bytes.
func (m *model) nextGoal(live, stacks, globals float64) float64 {
	gogc := float64(m.p.GOGC) / 100
	goal := math.Max(live+(live+stacks+globals)*gogc, heapMinimum*gogc)
	if lim := m.p.MemLimit; lim > 0 {
		nonHeap := m.total() - m.released - m.free - m.objects
		limGoal := lim - nonHeap - math.Max(0.03*lim, mib)
		goal = math.Min(goal, math.Max(limGoal, live))
	}
	return goal
}

// freeOSMemory is debug.FreeOSMemory: a forced GC, then every free page returned, over
// FreeOSMemoryTook (step releases them).
func (m *model) freeOSMemory() {
	m.gc(true)
	if took := m.p.FreeOSMemoryTook; took > 0 {
		m.releasing, m.releaseRate = m.free, m.free/took
	} else {
		m.release(m.free)
	}
	m.batchDone++
	if m.p.SpikePeriod < 1e8 {
		m.freeOSMemoryAt = m.p.SpikePhase + float64(m.batchDone)*m.p.SpikePeriod + m.p.SpikeRise + m.p.SpikeHold
	} else {
		m.freeOSMemoryAt = math.Inf(1)
	}
}

// ou advances an Ornstein-Uhlenbeck process of standard deviation sigma and time constant
// tau by dt.
func ou(r *rand.Rand, x, sigma, tau, dt float64) float64 {
	return x - x*dt/tau + sigma*math.Sqrt(2*dt/tau)*r.NormFloat64()
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
