package evidence

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/agent/bytesize"
	"github.com/memdoctor/memdoctor/session"
)

// Options tune how evidence is built.
type Options struct {
	// Until ends the evidence at this time, as if collection had stopped then (zero = all).
	Until time.Time
	// MemoryBudgetBytes overrides the session's memory budget (0 = the session's, else the
	// cgroup limit).
	MemoryBudgetBytes uint64
	// MaxSkew is how far apart a Go reading and a /proc reading may be for memory to be split
	// between them (0 = 1.5 s): memory moves fast, and a stale pairing invents non-Go memory.
	MaxSkew time.Duration
	// MaxProfileBytes bounds a profile's decompressed size (0 = pprofio's default, 32 MiB).
	MaxProfileBytes int64
}

// defaultMaxSkew: see Options.MaxSkew.
const defaultMaxSkew = 1500 * time.Millisecond

// FromSession builds the evidence of a session, streaming its samples and gctrace cycles.
// It fails only when the session's files cannot be read at all; damage inside becomes notes.
func FromSession(s *session.Session, opts Options) (*Evidence, error) {
	if opts.MaxSkew <= 0 {
		opts.MaxSkew = defaultMaxSkew
	}
	m := s.Manifest
	ev := &Evidence{
		Mode:    m.Mode,
		Session: s.Dir,
		Target: Target{
			PID: m.Target.PID, Name: m.Target.Name, Command: m.Command, GoVersion: m.Target.GoVersion,
			MainModule: m.Target.MainModule, PprofURL: m.Target.PprofURL, AgentURL: m.Target.AgentURL,
			Local: m.Target.Local, Status: m.Status, GODEBUG: m.Target.GODEBUG, GOGC: m.Target.GOGC,
			GOMEMLIMIT: m.Target.GOMEMLIMIT, Started: m.Target.Started,
		},
		profiles: newStore(opts.MaxProfileBytes, m.Target.MainModule),
	}
	if ev.Target.Started.IsZero() {
		ev.Target.Started = m.GCTraceBase // the runtime's start, as gctrace counts it
	}
	b := newSessionBuild(ev, opts)
	b.gomaxprocsEnv = m.Target.GOMAXPROCS
	b.sessionStart = m.Start
	if err := b.readGC(s); err != nil {
		return nil, err
	}
	if err := b.readSamples(s); err != nil {
		return nil, err
	}
	b.listSnapshots(s)
	b.window(s)
	b.profileFallbacks()
	b.finish()
	for _, t := range m.Restarts {
		if b.in(t) {
			ev.Restarts = append(ev.Restarts, t)
		}
	}
	ev.Notes = append(ev.Notes, m.Notes...)
	ev.Notes = append(ev.Notes, s.Warnings...)
	ev.setBudget(opts.MemoryBudgetBytes, m.MemoryBudgetBytes, m.MemoryBudgetSource)
	for _, at := range []*breakdown.At{ev.Peak, ev.Latest} {
		if at != nil {
			at.SetLimits(b.pair.cgroup, ev.Budget)
		}
	}
	ev.fromAttempts(m.Attempts)
	ev.explainGaps()
	return ev, nil
}

// multi keeps the readings of one quantity per source; the canonical series is the source
// with the most readings (a series never mixes sources: their levels differ, as 1.26's
// /sched/goroutines counts system goroutines that NumGoroutine does not).
// It is indexed by source (a map lookup per reading cost a tenth of reading a long session);
// copies share the builders.
type multi struct{ by *[len(sourceNames)]*builder }

func newMulti() multi { return multi{by: new([len(sourceNames)]*builder)} }

// any reports whether any source gave a reading.
func (m multi) any() bool {
	for _, b := range m.by {
		if b != nil {
			return true
		}
	}
	return false
}

// get is the builder of src, nil when none; every source has a slot.
func (m multi) get(src Source) *builder {
	if int(src) >= len(m.by) {
		return nil
	}
	return m.by[src]
}

func (m multi) add(src Source, quantum float64, t time.Time, v float64) {
	b := m.get(src)
	if b == nil {
		b = newBuilder(src, quantum)
		m.by[src] = b
	}
	b.add(t, v)
}

func (m multi) addCounter(src Source, t time.Time, v float64) {
	b := m.get(src)
	if b == nil {
		b = newCounter(src)
		m.by[src] = b
	}
	b.add(t, v)
}

// priority orders the sources of a quantity: finer and truer first.
var priority = []Source{SourceRuntimeMetrics, SourceProcessMemory, SourceGCTrace, SourcePprofIndex, SourceProc, SourceMemStats,
	SourceHeapProfile, SourceGoroutineProfile, SourceLeakProfile, SourcePrometheus, SourceCgroup, SourceUnknown}

// best is the finest source with at least minBest readings (a series of per-cycle gctrace
// figures beats MemStats read every second: MemStats' GC CPU counts idle-time marking, and
// its readings repeat the last cycle's), else the source with the most readings.
func (m multi) best() Series {
	var most *builder
	for _, src := range priority {
		b := m.get(src)
		if b == nil {
			continue
		}
		if b.count() >= minBest {
			return b.series()
		}
		if most == nil || b.count() > most.count() {
			most = b
		}
	}
	return most.series()
}

// minBest is how many readings make a source a series.
const minBest = 3

// sessionBuild is the state of one pass over a session.
type sessionBuild struct {
	ev   *Evidence
	opts Options

	rss, hwm, anon, file, lazy, tree, cpu, cgUsage                    multi
	live, inUse, atGC, goal, free, resident, stacks, goroutines, leak multi
	cycles, forced, gcCPU, assist, avail, allocB, allocO              multi
	nonGo, nonGoShare, retained, retainedShare, released              multi
	schedRun, schedWait                                               multi
	scans                                                             []float64
	gc                                                                gcSums

	first, last   time.Time // the earliest and latest reading
	gcProcs       int
	pair          pairing
	untimedGC     int
	gomaxprocsEnv int
	sessionStart  time.Time
	oomFirst      uint64 // the first cgroup reading's oom_kill count
	oomSeen       bool
}

func newSessionBuild(ev *Evidence, opts Options) *sessionBuild {
	b := &sessionBuild{ev: ev, opts: opts}
	for _, p := range []*multi{&b.rss, &b.hwm, &b.anon, &b.file, &b.lazy, &b.tree, &b.cpu, &b.cgUsage,
		&b.live, &b.inUse, &b.atGC, &b.goal, &b.free, &b.resident, &b.stacks, &b.goroutines, &b.leak,
		&b.cycles, &b.forced, &b.gcCPU, &b.assist, &b.avail, &b.allocB, &b.allocO,
		&b.nonGo, &b.nonGoShare, &b.retained, &b.retainedShare, &b.released, &b.schedRun, &b.schedWait} {
		*p = newMulti()
	}
	b.pair.maxSkew = opts.MaxSkew
	return b
}

// in reports whether t is inside the evidence (not after Until).
func (b *sessionBuild) in(t time.Time) bool {
	return b.opts.Until.IsZero() || !t.After(b.opts.Until)
}

func (b *sessionBuild) saw(t time.Time) {
	if b.first.IsZero() || t.Before(b.first) {
		b.first = t
	}
	if t.After(b.last) {
		b.last = t
	}
}

const mib = 1 << 20

// readGC maps the session's gctrace cycles (see gcCycle).
func (b *sessionBuild) readGC(s *session.Session) error {
	skipped, err := s.EachGC(func(e session.GCEvent) error {
		b.ev.GCLines++
		if e.Time.IsZero() {
			b.untimedGC++
			return nil
		}
		if b.in(e.Time) {
			b.gcCycle(e.Time, e.Cycle)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if skipped > 0 {
		b.ev.Notes = append(b.ev.Notes, fmt.Sprintf("%s: skipped %d unparsable gc line(s)", session.GCTraceFile, skipped))
	}
	if b.untimedGC > 0 && b.gc.n == 0 {
		b.ev.Notes = append(b.ev.Notes, fmt.Sprintf("gctrace has %d cycles but no time base: they are not placed in time", b.untimedGC))
	}
	return nil
}

// readSamples maps every sample of metrics.jsonl.
func (b *sessionBuild) readSamples(s *session.Session) error {
	st, err := s.EachSample(func(smp *session.Sample) error {
		b.ev.Samples++
		if !b.in(smp.Time) {
			return nil
		}
		b.saw(smp.Time)
		t := smp.Time
		if p := smp.Proc; p != nil {
			b.proc(t, p)
		}
		if c := smp.Cgroup; c != nil {
			b.cgUsage.add(SourceCgroup, 0, t, float64(c.UsageBytes))
			if c.LimitBytes > 0 {
				b.ev.CgroupLimit = c.LimitBytes
			}
			if !b.oomSeen {
				b.oomFirst, b.oomSeen = c.OOMKills, true
			}
			b.ev.OOMKills = max(b.ev.OOMKills, c.OOMKills)
			b.ev.OOMKillsInWindow = b.ev.OOMKills - min(b.oomFirst, b.ev.OOMKills)
		}
		if g := smp.Go; g != nil {
			b.goMem(t, g)
		}
		if sc := smp.Sched; sc != nil && sc.RunSeconds > 0 {
			b.schedRun.addCounter(SourceProc, t, sc.RunSeconds)
			b.schedWait.addCounter(SourceProc, t, sc.WaitSeconds)
		}
		if p := smp.Pprof; p != nil {
			b.goroutines.add(SourcePprofIndex, 1, t, float64(p.Goroutines))
			if p.GoroutineLeak >= 0 {
				b.leak.add(SourcePprofIndex, 1, t, float64(p.GoroutineLeak))
				b.ev.LeakProfileServed = true
			}
		}
		b.pair.sample(b, t, smp.Proc, smp.Go)
		return nil
	})
	if w := st.Warning(session.MetricsFile); w != "" {
		b.ev.Notes = append(b.ev.Notes, w)
	}
	return err
}

func (b *sessionBuild) proc(t time.Time, p *session.Proc) {
	b.rss.add(SourceProc, 0, t, float64(p.RSSBytes))
	if p.HWMBytes > 0 {
		b.hwm.add(SourceProc, 0, t, float64(p.HWMBytes))
	}
	b.anon.add(SourceProc, 0, t, float64(p.RSSAnonBytes))
	b.file.add(SourceProc, 0, t, float64(p.RSSFileBytes+p.RSSShmemBytes))
	b.lazy.add(SourceProc, 0, t, float64(p.LazyFreeBytes))
	if p.TreeRSSBytes > 0 {
		b.tree.add(SourceProc, 0, t, float64(p.TreeRSSBytes))
		if tr := b.tree.get(SourceProc); tr != nil && len(tr.buckets) > 0 && float64(p.TreeRSSBytes) >= maxOf(tr) {
			b.ev.TreeProcs = p.TreeProcs
		}
	}
	if p.CPUSeconds > 0 {
		b.cpu.addCounter(SourceProc, t, p.CPUSeconds)
	}
}

func maxOf(b *builder) float64 {
	m := math.Inf(-1)
	for _, k := range b.buckets {
		m = math.Max(m, k.maxV)
	}
	return m
}

func (b *sessionBuild) goMem(t time.Time, g *session.GoMem) {
	src := sourceOf(g.Source)
	if g.TotalBytes > 0 {
		b.inUse.add(src, 0, t, float64(g.HeapObjectsBytes))
		b.free.add(src, 0, t, float64(g.HeapFreeBytes))
		b.resident.add(src, 0, t, float64(g.RuntimeResident()))
		b.stacks.add(src, 0, t, float64(g.HeapStacksBytes+g.OSStacksBytes))
		p := &b.ev.Pacer
		p.NonHeap = float64(g.HeapStacksBytes + g.OSStacksBytes + g.MetadataBytes + g.OtherBytes)
		p.HasGoMemory = true
	}
	if g.HeapLiveBytes > 0 {
		b.live.add(src, 0, t, float64(g.HeapLiveBytes))
	}
	if g.HeapGoalBytes > 0 {
		b.goal.add(src, 0, t, float64(g.HeapGoalBytes))
	}
	if g.Goroutines > 0 {
		gsrc := src
		if src == SourceMemStats { // the recorder counts the last goroutine profile
			gsrc = SourceGoroutineProfile
		}
		b.goroutines.add(gsrc, 1, t, float64(g.Goroutines))
	}
	if g.GCCycles > 0 || g.TotalBytes > 0 {
		b.cycles.addCounter(src, t, float64(g.GCCycles))
		b.forced.addCounter(src, t, float64(g.GCForcedCycles))
	}
	if g.AllocBytesTotal > 0 {
		b.allocB.addCounter(src, t, float64(g.AllocBytesTotal))
	}
	if g.AllocObjectsTotal > 0 {
		b.allocO.addCounter(src, t, float64(g.AllocObjectsTotal))
	}
	switch {
	case g.GCTotalSeconds > 0 || g.CPUTotalSeconds > 0:
		b.gcCPU.addCounter(src, t, g.GCTotalSeconds-g.GCIdleSeconds)
		b.assist.addCounter(src, t, g.GCAssistSeconds)
		if g.CPUTotalSeconds > 0 {
			b.avail.addCounter(src, t, g.CPUTotalSeconds)
		}
	case g.GCCPUFraction > 0:
		// MemStats gives the GC's share of the available CPU since the process started:
		// with its start time and GOMAXPROCS, that is a cumulative count of GC CPU seconds.
		if started, procs := b.ev.Target.Started, b.procs(g); !started.IsZero() && procs > 0 && t.After(started) {
			avail := t.Sub(started).Seconds() * float64(procs)
			b.gcCPU.addCounter(src, t, g.GCCPUFraction*avail)
			b.avail.addCounter(src, t, avail)
		}
	}
	if sc := g.StackScanBytes + g.GlobalsScanBytes; sc > 0 {
		b.scans = append(b.scans, float64(sc))
	}
	if g.GOGC != 0 {
		b.ev.Pacer.GOGC = float64(g.GOGC)
	}
	if g.GOMemLimitBytes != 0 && g.GOMemLimitBytes < math.MaxInt64 {
		b.ev.Pacer.GOMemLimit = float64(g.GOMemLimitBytes)
	}
	if g.GOMAXPROCS > 0 {
		b.ev.Pacer.GOMAXPROCS = g.GOMAXPROCS
	}
}

// procs is the target's GOMAXPROCS as best known: its agent's, gctrace's, else its
// environment's, else the manifest's estimate.
func (b *sessionBuild) procs(g *session.GoMem) int {
	switch {
	case g.GOMAXPROCS > 0:
		return g.GOMAXPROCS
	case b.gcProcs > 0:
		return b.gcProcs
	case b.ev.Pacer.GOMAXPROCS > 0:
		return b.ev.Pacer.GOMAXPROCS
	}
	return b.gomaxprocsEnv
}

// window sets the evidence's start and end: the manifest's, else the data's, cut at Until.
func (b *sessionBuild) window(s *session.Session) {
	ev := b.ev
	ev.Start, ev.End = s.Manifest.Start, s.Manifest.End
	if ev.Start.IsZero() || !b.first.IsZero() && b.first.Before(ev.Start) {
		ev.Start = b.first
	}
	if ev.End.IsZero() || b.last.After(ev.End) {
		ev.End = b.last
	}
	if u := b.opts.Until; !u.IsZero() && (ev.End.IsZero() || ev.End.After(u)) {
		ev.End = u
	}
	if ev.End.Before(ev.Start) {
		ev.End = ev.Start
	}
}

// finish turns the builders into the canonical series.
func (b *sessionBuild) finish() {
	ev := b.ev
	ev.RSS, ev.HWM, ev.RSSAnon, ev.RSSFile, ev.LazyFree = b.rss.best(), b.hwm.best(), b.anon.best(), b.file.best(), b.lazy.best()
	ev.TreeRSS, ev.ProcessCPU, ev.CgroupUsage = b.tree.best(), b.cpu.best(), b.cgUsage.best()
	ev.Live, ev.HeapInUse, ev.HeapAtGC, ev.HeapGoal = b.live.best(), b.inUse.best(), b.atGC.best(), b.goal.best()
	ev.HeapFree, ev.RuntimeResident, ev.Stacks = b.free.best(), b.resident.best(), b.stacks.best()
	ev.Goroutines, ev.Leaked = b.goroutines.best(), b.leak.best()
	ev.GCCycles, ev.GCForced = b.cycles.best(), b.forced.best()
	ev.GCCPU, ev.GCAssist, ev.AvailableCPU = b.gcCPU.best(), b.assist.best(), b.avail.best()
	ev.AllocBytes, ev.AllocObjects = b.allocB.best(), b.allocO.best()
	ev.SchedRun, ev.SchedWait = b.schedRun.best(), b.schedWait.best()
	b.pair.finish(b)
	ev.NonGo, ev.NonGoShare, ev.Retained = b.nonGo.best(), b.nonGoShare.best(), b.retained.best()
	ev.RetainedShare, ev.ReleasedResident = b.retainedShare.best(), b.released.best()
	p := &ev.Pacer
	p.ScanBytes = median(b.scans)
	if p.GOMAXPROCS == 0 {
		p.GOMAXPROCS = b.gcProcs
	}
	if p.GOGC == 0 {
		p.GOGC = gogcFromEnv(ev.Target.GOGC)
	}
	if p.GOMemLimit == 0 { // no runtime reading gave it (MemStats has none): the environment's
		switch n, set, err := bytesize.GoMemLimit(ev.Target.GOMEMLIMIT); {
		case err != nil:
			ev.Notes = append(ev.Notes, fmt.Sprintf("the target's %v (a Go program does not start with it)", err))
		case set && n > 0 && n < math.MaxInt64:
			p.GOMemLimit = float64(n)
		}
	}
	if ev.Latest != nil {
		p.Outside = float64(ev.Latest.NonGoBytes + ev.Latest.FileBytes)
	}
	// Fill the live heap of the breakdowns from the live series when their Go reading did
	// not carry it (MemStats does not).
	for _, at := range []*breakdown.At{ev.Peak, ev.Latest} {
		ev.fillLive(at)
	}
	for i := range ev.Splits {
		ev.fillLive(&ev.Splits[i])
	}
}

// finishNew completes evidence built with New: the series that gctrace cycles and profiles
// give join those its source set directly, and for each quantity the source with the most
// readings wins, as in finish.
func (b *sessionBuild) finishNew() {
	ev := b.ev
	if b.gc.n == 0 && len(ev.Heaps)+len(ev.GoroutineSnaps)+len(ev.LeakSnaps) == 0 {
		return // nothing but what the source set directly
	}
	qs := []struct {
		dst     *Series
		m       multi
		counter bool
	}{
		{&ev.Live, b.live, false}, {&ev.HeapAtGC, b.atGC, false}, {&ev.HeapGoal, b.goal, false},
		{&ev.Goroutines, b.goroutines, false}, {&ev.Leaked, b.leak, false},
		{&ev.GCCycles, b.cycles, true}, {&ev.GCForced, b.forced, true}, {&ev.GCCPU, b.gcCPU, true},
		{&ev.GCAssist, b.assist, true}, {&ev.AvailableCPU, b.avail, true},
		{&ev.AllocBytes, b.allocB, true}, {&ev.AllocObjects, b.allocO, true},
	}
	for _, q := range qs { // what the source set directly competes with what follows
		for _, p := range q.dst.Points {
			if q.counter {
				q.m.addCounter(q.dst.Src, p.T, p.V)
			} else {
				q.m.add(q.dst.Src, q.dst.Res.Quantum, p.T, p.V)
			}
		}
	}
	b.profileFallbacks()
	for _, q := range qs {
		if q.m.any() {
			*q.dst = q.m.best()
		}
	}
	p := &ev.Pacer
	if p.ScanBytes == 0 {
		p.ScanBytes = median(b.scans)
	}
	if p.GOMAXPROCS == 0 {
		p.GOMAXPROCS = b.gcProcs
	}
	if p.GOGC == 0 && b.gc.n > 0 {
		p.GOGC = gogcFromEnv(ev.Target.GOGC) // as for a session: unset means 100
	}
}

// gogcFromEnv reads a GOGC environment value: 100 when unset, -1 for off.
func gogcFromEnv(v string) float64 {
	switch v = strings.TrimSpace(v); {
	case v == "":
		return 100
	case strings.EqualFold(v, "off"):
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return float64(n)
	}
	return 100
}

// setBudget picks the memory budget: an option, the session's, else the cgroup limit.
func (ev *Evidence) setBudget(option, session uint64, sessionSource string) {
	switch {
	case option > 0:
		ev.Budget, ev.BudgetSource = option, "option"
	case session > 0:
		ev.Budget, ev.BudgetSource = session, sessionSource
	case ev.CgroupLimit > 0:
		ev.Budget, ev.BudgetSource = ev.CgroupLimit, "cgroup"
	}
}
