package evidence

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// readSamples maps every sample of metrics.jsonl.
func (b *sessionBuild) readSamples(s *session.Session) error {
	st, err := s.EachSample(func(smp *session.Sample) error {
		b.ev.Samples++
		if b.in(smp.Time) {
			b.sample(smp)
		}
		return nil
	})
	if w := st.Warning(session.MetricsFile); w != "" {
		b.ev.Notes = append(b.ev.Notes, w)
	}
	return err
}

// reading is one sample being mapped, as the readers of the table of quantities see it.
type reading struct {
	b     *sessionBuild
	t     time.Time
	s     *session.Sample
	goSrc Source // the source of the sample's Go reading
	// The quantity being read.
	q quantity
	d *desc
}

// add records a reading of the quantity being read.
func (r *reading) add(src Source, v float64) { r.b.m[r.q].put(r.d, src, r.t, v) }

// sample maps one sample: every quantity the table reads from it, the figures that are not
// series (the cgroup's limit and OOM kills, the pacer's settings, whether the goroutineleak
// profile is served), and the split of memory.
func (b *sessionBuild) sample(smp *session.Sample) {
	b.saw(smp.Time)
	r := &b.reading
	*r = reading{b: b, t: smp.Time, s: smp}
	if g := smp.Go; g != nil {
		r.goSrc = sourceOf(g.Source)
	}
	for q := range quantities {
		if d := &quantities[q]; d.sample != nil {
			r.q, r.d = quantity(q), d
			d.sample(r)
		}
	}
	if c := smp.Cgroup; c != nil {
		b.cgroup(c)
	}
	if g := smp.Go; g != nil {
		b.pacer(g)
	}
	if p := smp.Pprof; p != nil && p.GoroutineLeak >= 0 {
		b.ev.LeakProfileServed = true
	}
	b.pair.sample(b, smp.Time, smp.Proc, smp.Go)
}

// procFigure reads a figure of the sample's /proc reading, when f says it was read.
func procFigure(f func(*session.Proc) (float64, bool)) func(*reading) {
	return func(r *reading) {
		if p := r.s.Proc; p != nil {
			if v, ok := f(p); ok {
				r.add(SourceProc, v)
			}
		}
	}
}

// goFigure reads a figure of the sample's Go reading, when f says it was read.
func goFigure(f func(*session.GoMem) (float64, bool)) func(*reading) {
	return func(r *reading) {
		if g := r.s.Go; g != nil {
			if v, ok := f(g); ok {
				r.add(r.goSrc, v)
			}
		}
	}
}

// schedFigure reads a figure of the sample's schedstat reading, when it was read.
func schedFigure(f func(*session.Sched) float64) func(*reading) {
	return func(r *reading) {
		if sc := r.s.Sched; sc != nil && sc.RunSeconds > 0 {
			r.add(SourceProc, f(sc))
		}
	}
}

// readTreeRSS reads the process tree's memory, and how many processes it had at its peak.
func readTreeRSS(r *reading) {
	p := r.s.Proc
	if p == nil || p.TreeRSSBytes == 0 {
		return
	}
	r.add(SourceProc, float64(p.TreeRSSBytes))
	if tr := r.b.m[qTreeRSS].get(SourceProc); tr != nil && len(tr.buckets) > 0 && float64(p.TreeRSSBytes) >= maxOf(tr) {
		r.b.ev.TreeProcs = p.TreeProcs
	}
}

func maxOf(b *builder) float64 {
	m := math.Inf(-1)
	for _, k := range b.buckets {
		m = math.Max(m, k.maxV)
	}
	return m
}

func readCgroupUsage(r *reading) {
	if c := r.s.Cgroup; c != nil {
		r.add(SourceCgroup, float64(c.UsageBytes))
	}
}

// readGoroutines reads the goroutine count of the Go reading (the recorder's MemStats
// readings carry the count of the last goroutine profile) and of the pprof index.
func readGoroutines(r *reading) {
	if g := r.s.Go; g != nil && g.Goroutines > 0 {
		src := r.goSrc
		if src == SourceMemStats {
			src = SourceGoroutineProfile
		}
		r.add(src, float64(g.Goroutines))
	}
	if p := r.s.Pprof; p != nil {
		r.add(SourcePprofIndex, float64(p.Goroutines))
	}
}

// readLeaked reads the pprof index's count of leaked goroutines, when the profile is served.
func readLeaked(r *reading) {
	if p := r.s.Pprof; p != nil && p.GoroutineLeak >= 0 {
		r.add(SourcePprofIndex, float64(p.GoroutineLeak))
	}
}

// cpuClasses reports a Go reading with runtime/metrics' CPU classes.
func cpuClasses(g *session.GoMem) bool { return g.GCTotalSeconds > 0 || g.CPUTotalSeconds > 0 }

// readGCCPU reads the GC's CPU seconds, idle-priority marking left out: from the CPU
// classes, else from MemStats' share of the available CPU since the process started.
func readGCCPU(r *reading) {
	g := r.s.Go
	switch {
	case g == nil:
	case cpuClasses(g):
		r.add(r.goSrc, g.GCTotalSeconds-g.GCIdleSeconds)
	default:
		// The runtime computes the fraction at the end of each GC, of the CPU available from
		// the process's start to then, and leaves it until the next (runtime/mgc.go): it is
		// multiplied by the CPU available up to the last GC's end. Up to the reading, it would
		// count GC time growing between cycles, and a service whose GC did not run would show
		// its start-up's share as a GC busy now. Readings without the last GC's time (sessions
		// of before) take the reading's.
		at := r.t
		if g.LastGCUnixNano > 0 && g.LastGCUnixNano <= math.MaxInt64 {
			at = time.Unix(0, int64(g.LastGCUnixNano))
		}
		if avail, ok := r.availableUntil(g, at); ok {
			r.add(r.goSrc, g.GCCPUFraction*avail)
		}
	}
}

// readAvailableCPU reads the CPU seconds available to the process (GOMAXPROCS x wall time),
// as readGCCPU does.
func readAvailableCPU(r *reading) {
	g := r.s.Go
	switch {
	case g == nil:
	case cpuClasses(g):
		if g.CPUTotalSeconds > 0 {
			r.add(r.goSrc, g.CPUTotalSeconds)
		}
	default:
		if avail, ok := r.availableUntil(g, r.t); ok {
			r.add(r.goSrc, avail)
		}
	}
}

// availableUntil is the CPU seconds available from the process's start to at, which MemStats'
// GC CPU fraction is a share of: with its start time and GOMAXPROCS, the fraction is a
// cumulative count of GC CPU seconds.
func (r *reading) availableUntil(g *session.GoMem, at time.Time) (float64, bool) {
	started, procs := r.b.ev.Target.Started, r.b.procs(g)
	if g.GCCPUFraction <= 0 || started.IsZero() || procs <= 0 || !at.After(started) {
		return 0, false
	}
	if at.After(r.t) { // the target's clock a little ahead of the reading's
		at = r.t
	}
	return at.Sub(started).Seconds() * float64(procs), true
}

// cgroup takes what the cgroup reading says besides its usage: the limit and OOM kills.
func (b *sessionBuild) cgroup(c *session.Cgroup) {
	if c.LimitBytes > 0 {
		b.ev.CgroupLimit = c.LimitBytes
	}
	if !b.oomSeen {
		b.oomFirst, b.oomSeen = c.OOMKills, true
	}
	b.ev.OOMKills = max(b.ev.OOMKills, c.OOMKills)
	b.ev.OOMKillsInWindow = b.ev.OOMKills - min(b.oomFirst, b.ev.OOMKills)
}

// pacer takes what the pacer model needs from a Go reading.
func (b *sessionBuild) pacer(g *session.GoMem) {
	p := &b.ev.Pacer
	if g.TotalBytes > 0 {
		p.NonHeap = float64(g.HeapStacksBytes + g.OSStacksBytes + g.MetadataBytes + g.OtherBytes)
		p.HasGoMemory = true
	}
	if sc := g.StackScanBytes + g.GlobalsScanBytes; sc > 0 {
		b.scans = append(b.scans, float64(sc))
	}
	if g.GOGC != 0 {
		p.GOGC = float64(g.GOGC)
	}
	if g.GOMemLimitBytes != 0 && g.GOMemLimitBytes < math.MaxInt64 {
		p.GOMemLimit = float64(g.GOMemLimitBytes)
	}
	if g.GOMAXPROCS > 0 {
		p.GOMAXPROCS = g.GOMAXPROCS
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
	return b.ev.Target.GOMAXPROCS
}
