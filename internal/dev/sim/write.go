package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// epoch is the wall-clock day every simulated process starts on (plus a seeded offset).
var epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const (
	simPID          = 4242
	agentHistoryMax = 3600.0 // s of samples the agent's ring holds
	agentRounds     = 8      // periodic profile rounds the agent keeps
	systemGoroutine = 5      // goroutines /sched/goroutines counts that NumGoroutine does not
)

type obsKind int

const (
	obsTick     obsKind = iota // measure the truth only
	obsProc                    // a /proc sample
	obsMemStats                // the MemStats block read between snapshots (pprof)
	obsAgent                   // an agent sample: runtime/metrics and /proc
	obsProfile                 // heap and goroutine profiles, and the MemStats block under pprof
)

type obs struct {
	t    float64 // s since process start
	kind obsKind
}

// Generate simulates the service that seed and spec draw and writes the session one vantage
// point would have recorded to dir, which must not hold a session yet. It returns what a
// diagnosis of that session must find.
func Generate(dir string, seed uint64, spec Spec) (Truth, error) {
	p, err := draw(seed, spec)
	if err != nil {
		return Truth{}, err
	}
	g := &generator{
		spec:  spec,
		p:     p,
		start: epoch.Add(time.Duration(seed%86400) * time.Second),
	}
	r := rand.New(rand.NewPCG(seed, hashSpec(spec)^0x5eed))
	g.sites = newSiteSet(rand.New(rand.NewPCG(seed, hashSpec(spec)^0x517e)), p)
	g.m = newModel(p, r, g.sites)
	g.ws, g.we = p.Uptime, p.Uptime+p.Window
	if spec.Vantage == Run {
		g.ws = 0.005 // memdoctor run starts the process a few milliseconds after the session
	}
	if spec.Vantage == Burst { // the profiles are taken as the window ends
		g.ws = g.we - float64(p.BurstN-1)*p.BurstStep - 0.3
	}
	w, err := session.Create(dir, g.manifest())
	if err != nil {
		return Truth{}, fmt.Errorf("sim: %w", err)
	}
	if err := g.record(w); err != nil {
		w.Close(session.StatusFailed, err.Error())
		return Truth{}, fmt.Errorf("sim: %s: %w", dir, err)
	}
	end := g.wall(g.we)
	if err := w.UpdateManifest(func(m *session.Manifest) { m.End = end }); err != nil {
		return Truth{}, fmt.Errorf("sim: %w", err)
	}
	if err := w.Close(session.StatusComplete, "ran for "+spec.Window.String()); err != nil {
		return Truth{}, fmt.Errorf("sim: %w", err)
	}
	return g.truth(), nil
}

// generator runs one simulation and writes its session.
type generator struct {
	spec   Spec
	p      Params
	m      *model
	sites  *siteSet
	start  time.Time // the process's start, on the wall clock
	ws, we float64   // the window, in s since process start

	gcWritten  int
	goroutines int // the count of the last goroutine profile

	// What the window held, for the truth.
	started  bool
	observed Observed
	retained []float64 // free + LazyFree at each tick of the window
	live     []float64 // the true live heap at each tick
	goals    []float64 // the heap goal at each tick
	gcCPU0   float64   // GC CPU (idle marking excluded) at the window's start
	user0    float64
}

// wall converts seconds since process start to the wall clock.
func (g *generator) wall(t float64) time.Time {
	return g.start.Add(time.Duration(t * float64(time.Second))).UTC()
}

func (g *generator) manifest() session.Manifest {
	p := g.p
	tg := session.Target{
		PID: simPID, Name: "svc", Exe: "/app/svc", Cmdline: []string{"/app/svc", "-addr", ":8080"},
		GoVersion: "go1.26.8", GoVersionSource: "buildinfo", MainModule: MainModule,
		PprofURL: "http://127.0.0.1:6060/debug/pprof/", GOMAXPROCS: p.GOMAXPROCS, Local: true,
	}
	if p.GOGC != 100 {
		tg.GOGC = strconv.Itoa(p.GOGC)
	}
	if p.RetentionMode != "" {
		tg.GODEBUG = "madvdontneed=0"
	}
	m := session.Manifest{
		MemdoctorVersion: "sim",
		Mode:             "watch",
		Target:           tg,
		Start:            g.wall(g.ws),
		Flags:            map[string]string{"duration": g.spec.Window.String(), "interval": "10s"},
		Notes:            []string{fmt.Sprintf("simulated by internal/sim: seed %d, shape %s, vantage %s", p.Seed, g.spec.Shape, g.spec.Vantage)},
	}
	switch g.spec.Vantage {
	case Run:
		m.Mode = "run"
		m.Command = tg.Cmdline
		m.Start = g.wall(0)
		m.GCTraceBase = g.wall(g.ws)
		if m.Target.GODEBUG != "" {
			m.Target.GODEBUG += ","
		}
		m.Target.GODEBUG += "gctrace=1"
	case WatchAgent:
		m.Target.AgentURL = "http://127.0.0.1:6060/debug/memdoctor/"
		m.Target.GoVersionSource = "agent"
	}
	if g.spec.Vantage != Profiles && g.spec.Vantage != Burst {
		m.Target.Started = g.wall(0) // from /proc, or the agent's info
	}
	switch g.spec.Vantage {
	case Profiles, Burst:
		m.Target.Local = false
		m.Notes = append(m.Notes, "profiles only: no /proc, MemStats or runtime/metrics samples")
	}
	return m
}

// schedule lists what the vantage point observes, in time order.
func (g *generator) schedule() []obs {
	var out []obs
	interval := g.p.ProfileInterval
	for t := g.ws; t <= g.we; t += 0.25 {
		out = append(out, obs{t, obsTick})
	}
	switch g.spec.Vantage {
	case Run, WatchPprof:
		for t := g.ws + 0.1; t <= g.we; t++ {
			out = append(out, obs{t, obsProc})
			// The recorder reads MemStats with each sample when the target answers fast.
			out = append(out, obs{t + 0.05, obsMemStats})
		}
		for t := g.ws + 0.2; t <= g.we; t += interval {
			out = append(out, obs{t, obsProfile})
		}
	case WatchAgent:
		// The agent started with the process; watch copies its whole ring.
		from := math.Max(0.05, g.ws-agentHistoryMax)
		for t := from; t <= g.we; t++ {
			out = append(out, obs{t, obsAgent})
		}
		for t := 0.05; t <= g.we; t += interval {
			if t >= g.ws-agentRounds*interval {
				out = append(out, obs{t, obsProfile})
			}
		}
	case Profiles:
		for t := g.ws + 0.2; t <= g.we; t += interval {
			out = append(out, obs{t, obsProfile})
		}
	case Burst:
		for i := range g.p.BurstN {
			out = append(out, obs{g.ws + 0.2 + float64(i)*interval, obsProfile})
		}
	}
	slices.SortStableFunc(out, func(a, b obs) int { return cmp.Compare(a.t, b.t) })
	return out
}

// record runs the model through the schedule and writes what is observed.
func (g *generator) record(w *session.Writer) error {
	for _, o := range g.schedule() {
		g.m.advance(o.t)
		if err := g.flushGC(w, o.t); err != nil {
			return err
		}
		if o.t >= g.ws && !g.started {
			g.windowStart()
		}
		var err error
		switch o.kind {
		case obsTick:
			g.tick(o.t)
		case obsProc:
			err = w.AppendSample(session.Sample{Time: g.wall(o.t), Proc: g.proc()})
		case obsAgent:
			err = w.AppendSample(session.Sample{Time: g.wall(o.t), Proc: g.proc(), Go: g.runtimeMetrics()})
		case obsMemStats:
			err = w.AppendSample(session.Sample{Time: g.wall(o.t), Go: g.memStats()})
		case obsProfile:
			err = g.profiles(w, o.t)
		}
		if err != nil {
			return err
		}
	}
	g.m.advance(g.we)
	g.windowEnd()
	return g.flushGC(w, g.we)
}

// flushGC writes the gctrace lines of the cycles so far (run only) and drops them.
func (g *generator) flushGC(w *session.Writer, now float64) error {
	if g.spec.Vantage == Run {
		for _, c := range g.m.gcs {
			if err := w.AppendGCTrace(gctraceLine(c)); err != nil {
				return err
			}
		}
	}
	g.gcWritten += len(g.m.gcs)
	g.m.gcs = g.m.gcs[:0]
	return nil
}

func (g *generator) proc() *session.Proc {
	m := g.m
	return &session.Proc{
		PID:           simPID,
		RSSBytes:      uint64(m.rss()),
		RSSAnonBytes:  uint64(m.rssAnon()),
		RSSFileBytes:  uint64(g.p.BinaryBytes),
		HWMBytes:      uint64(m.hwm),
		LazyFreeBytes: uint64(m.lazy),
		Threads:       g.p.GOMAXPROCS + 5,
		CPUSeconds:    math.Round((m.user+m.gcTotal)*100) / 100, // clock ticks
	}
}

// goMem is what the runtime's memory classes say now.
func (g *generator) goMem(source string) *session.GoMem {
	m := g.m
	return &session.GoMem{
		Source:            source,
		HeapObjectsBytes:  uint64(m.objects),
		HeapUnusedBytes:   uint64(m.inUse() - m.objects),
		HeapFreeBytes:     uint64(m.free),
		HeapReleasedBytes: uint64(m.released),
		HeapStacksBytes:   uint64(m.stackBytes()),
		MetadataBytes:     uint64(m.metadata()),
		OtherBytes:        uint64(math.Round(otherBytes)),
		TotalBytes:        uint64(m.total()),
		HeapGoalBytes:     uint64(m.goal),
		AllocBytesTotal:   uint64(m.allocBytes),
		AllocObjectsTotal: uint64(m.allocObjects),
		GCCycles:          uint64(m.cycles),
		GCForcedCycles:    uint64(m.forced),
	}
}

// runtimeMetrics is the agent's runtime/metrics reading.
func (g *generator) runtimeMetrics() *session.GoMem {
	m := g.m
	gm := g.goMem("runtime/metrics")
	gm.HeapLiveBytes = uint64(m.marked)
	gm.StackScanBytes = uint64(m.stackScan())
	gm.GlobalsScanBytes = uint64(g.p.Globals)
	gm.GCTotalSeconds = m.gcTotal
	gm.GCAssistSeconds = m.gcAssist
	gm.GCIdleSeconds = m.gcIdle
	gm.GCPauseSeconds = m.gcPause
	gm.CPUTotalSeconds = float64(g.p.GOMAXPROCS) * m.t
	gm.PauseTotalSeconds = m.gcPause / float64(g.p.GOMAXPROCS)
	gm.Goroutines = m.goroutines() + systemGoroutine
	gm.GOGC = g.p.GOGC
	gm.GOMemLimitBytes = math.MaxInt64
	if g.p.MemLimit > 0 {
		gm.GOMemLimitBytes = uint64(g.p.MemLimit)
	}
	gm.GOMAXPROCS = g.p.GOMAXPROCS
	return gm
}

// memStats is the MemStats block of /debug/pprof/heap?debug=1, mapped as the recorder maps
// it.
func (g *generator) memStats() *session.GoMem {
	m := g.m
	gm := g.goMem("memstats")
	gm.GCCPUFraction = (m.gcTotal - m.gcIdle) / (float64(g.p.GOMAXPROCS) * m.t)
	gm.Goroutines = g.goroutines
	return gm
}

// profiles takes a round as the recorder does: goroutine profile, heap profile, then (from
// pprof) the MemStats block, a moment later.
func (g *generator) profiles(w *session.Writer, t float64) error {
	data, n, err := g.sites.goroutineProfile(g.m, g.wall(t))
	if err != nil {
		return err
	}
	if _, err := w.WriteProfile(session.KindGoroutine, g.wall(t), "", data); err != nil {
		return err
	}
	g.goroutines = n
	if data, err = g.sites.heapProfile(g.wall(t)); err != nil {
		return err
	}
	if _, err := w.WriteProfile(session.KindHeap, g.wall(t), "", data); err != nil {
		return err
	}
	if g.spec.Vantage == Run || g.spec.Vantage == WatchPprof {
		g.m.advance(t + 0.05)
		return w.AppendSample(session.Sample{Time: g.wall(t + 0.05), Go: g.memStats()})
	}
	return nil
}
