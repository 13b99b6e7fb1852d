package sim

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/gctrace"
	"github.com/memdoctor/memdoctor/session"
)

// generate writes one session and opens it.
// loaded is a generated session with its samples and gctrace cycles read.
type loaded struct {
	*session.Session
	Samples []session.Sample
	GC      []session.GCEvent
}

func generate(t *testing.T, seed uint64, spec Spec) (loaded, Truth) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	tr, err := Generate(dir, seed, spec)
	if err != nil {
		t.Fatalf("Generate(%d, %+v): %v", seed, spec, err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Errorf("seed %d %+v: session warnings: %v", seed, spec, s.Warnings)
	}
	l := loaded{Session: s}
	if l.Samples, err = s.ReadSamples(); err != nil {
		t.Fatal(err)
	}
	if l.GC, err = s.ReadGC(); err != nil {
		t.Fatal(err)
	}
	return l, tr
}

func readProfile(t *testing.T, s *session.Session, ref session.ProfileRef) *profile.Profile {
	t.Helper()
	path := ref.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.Dir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", ref.Path, err)
	}
	return p
}

// siteValue sums sample type typ over the samples whose stack holds fn.
func siteValue(t *testing.T, p *profile.Profile, typ, fn string) int64 {
	t.Helper()
	idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == typ })
	if idx < 0 {
		t.Fatalf("profile has no %s", typ)
	}
	var sum int64
	for _, s := range p.Sample {
		if slices.ContainsFunc(s.Location, func(l *profile.Location) bool { return l.Line[0].Function.Name == fn }) {
			sum += s.Value[idx]
		}
	}
	return sum
}

func TestGenerateDeterministic(t *testing.T) {
	spec := Spec{Shape: LeakUnderSpikes, Vantage: Run, Window: 45 * time.Second}
	var dirs [2]string
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), "s")
		if _, err := Generate(dirs[i], 7, spec); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	filepath.WalkDir(dirs[0], func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != session.ManifestFile {
			rel, _ := filepath.Rel(dirs[0], path)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) < 10 {
		t.Fatalf("only %d files: %v", len(files), files)
	}
	for _, f := range files {
		a, errA := os.ReadFile(filepath.Join(dirs[0], f))
		b, errB := os.ReadFile(filepath.Join(dirs[1], f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of one seed (%v, %v)", f, errA, errB)
		}
	}
	// Another seed draws another service.
	other := filepath.Join(t.TempDir(), "s")
	if _, err := Generate(other, 8, spec); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dirs[0], session.MetricsFile))
	b, _ := os.ReadFile(filepath.Join(other, session.MetricsFile))
	if bytes.Equal(a, b) {
		t.Error("seeds 7 and 8 wrote the same samples")
	}
}

func TestGenerateRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range []Spec{
		{Shape: "bloat", Vantage: Run, Window: time.Minute},
		{Shape: Healthy, Vantage: "telepathy", Window: time.Minute},
		{Shape: Healthy, Vantage: Run, Window: time.Second},
	} {
		if _, err := Generate(filepath.Join(dir, "x"), 1, spec); err == nil {
			t.Errorf("Generate(%+v): no error", spec)
		}
	}
	s := filepath.Join(dir, "s")
	if _, err := Generate(s, 1, Spec{Shape: Healthy, Vantage: Run, Window: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(s, 1, Spec{Shape: Healthy, Vantage: Run, Window: time.Minute}); err == nil {
		t.Error("Generate over an existing session: no error")
	}
}

// TestVantageContents checks that each vantage point writes what its collector writes.
func TestVantageContents(t *testing.T) {
	for _, v := range Vantages {
		t.Run(string(v), func(t *testing.T) {
			s, tr := generate(t, 3, Spec{Shape: Healthy, Vantage: v, Window: time.Minute})
			var proc, memstats, agent, other int
			for _, smp := range s.Samples {
				switch {
				case smp.Proc != nil && smp.Go != nil && smp.Go.Source == "runtime/metrics":
					agent++
				case smp.Proc != nil && smp.Go == nil:
					proc++
				case smp.Proc == nil && smp.Go != nil && smp.Go.Source == "memstats":
					memstats++
				default:
					other++
				}
			}
			heaps, gors := len(s.ProfilesOf(session.KindHeap, true)), len(s.ProfilesOf(session.KindGoroutine, true))
			t.Logf("%d proc, %d memstats, %d agent samples; %d gctrace cycles; %d heap and %d goroutine profiles",
				proc, memstats, agent, len(s.GC), heaps, gors)
			near := func(what string, got, want int) {
				if got < want-1 || got > want+1 {
					t.Errorf("%d %s, want about %d", got, what, want)
				}
			}
			if other != 0 {
				t.Errorf("%d samples of no vantage point's shape", other)
			}
			start, end := s.Manifest.Start, s.Manifest.End
			if d := end.Sub(start); v != Burst && (d < time.Minute-time.Second || d > time.Minute+time.Second) {
				t.Errorf("manifest spans %v, want the 1m window", d)
			}
			switch v {
			case Run:
				near("proc samples", proc, 60)
				near("memstats samples", memstats, 66) // one a second between snapshots, and one with each
				if agent != 0 || len(s.GC) < 5 || s.Manifest.GCTraceBase.IsZero() || s.Manifest.Mode != "run" {
					t.Errorf("run: %d agent samples, %d cycles, gctrace base %v, mode %s", agent, len(s.GC), s.Manifest.GCTraceBase, s.Manifest.Mode)
				}
				if got := tr.Observed.GCCycles; got != len(s.GC) {
					t.Errorf("gctrace has %d cycles, the model ran %d", len(s.GC), got)
				}
			case WatchPprof:
				near("proc samples", proc, 60)
				near("memstats samples", memstats, 66)
				if agent != 0 || len(s.GC) != 0 {
					t.Errorf("watch-pprof: %d agent samples, %d gctrace cycles", agent, len(s.GC))
				}
			case WatchAgent:
				// The agent's ring reaches back to the process's start.
				near("agent samples", agent, int(tr.Params.Uptime)+60)
				if proc != 0 || memstats != 0 || len(s.GC) != 0 || s.Manifest.Target.AgentURL == "" {
					t.Errorf("watch-agent: %d proc, %d memstats samples, %d cycles, agent URL %q", proc, memstats, len(s.GC), s.Manifest.Target.AgentURL)
				}
				if !s.Samples[0].Time.Before(start) {
					t.Errorf("the first agent sample %v is not from before the attach at %v", s.Samples[0].Time, start)
				}
				if iv := s.ProfilesOf(session.KindHeap, true); iv[1].Time.Sub(iv[0].Time) != time.Duration(tr.Params.ProfileInterval*float64(time.Second)) {
					t.Errorf("agent profiles %v apart, want %vs", iv[1].Time.Sub(iv[0].Time), tr.Params.ProfileInterval)
				}
			case Profiles, Burst:
				if len(s.Samples) != 0 || len(s.GC) != 0 {
					t.Errorf("profiles: %d samples, %d cycles", len(s.Samples), len(s.GC))
				}
			}
			if v == Burst {
				// BurstN profiles BurstStep apart, ending with the window.
				span := time.Duration(float64(tr.Params.BurstN-1) * tr.Params.BurstStep * float64(time.Second))
				if d := end.Sub(start); heaps != tr.Params.BurstN || d < span || d > span+time.Second {
					t.Errorf("burst: %d heap profiles over %v, want %d over %v", heaps, d, tr.Params.BurstN, span)
				}
			} else if v != WatchAgent {
				near("heap profiles", heaps, 6)
			}
			if heaps != gors {
				t.Errorf("%d heap profiles, %d goroutine profiles", heaps, gors)
			}
		})
	}
}

func TestGCTraceLinesParse(t *testing.T) {
	s, tr := generate(t, 5, Spec{Shape: Retention, Vantage: Run, Window: time.Minute})
	raw, err := os.ReadFile(filepath.Join(s.Dir, session.GCTraceFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	forced := 0
	for i, line := range lines {
		c, ok, err := gctrace.ParseLine(line)
		if !ok || err != nil {
			t.Fatalf("line %d %q: ok %v, %v", i+1, line, ok, err)
		}
		if c.N != i+1 || c.Procs != tr.Params.GOMAXPROCS || !c.HasStacksGlobals || c.HeapLive > c.HeapEnd {
			t.Errorf("line %d %q parsed as %+v", i+1, line, c)
		}
		if c.Forced {
			forced++
		}
	}
	// debug.FreeOSMemory after every batch is a forced cycle.
	if forced == 0 {
		t.Errorf("no forced cycle in %d lines of a retention session", len(lines))
	}
}

func TestFmtNSAsMS(t *testing.T) {
	for _, tc := range []struct {
		ns   uint64
		want string
	}{
		{0, "0"}, {999, "0"}, {5000, "0.005"}, {50000, "0.050"}, {130000, "0.13"}, {1300000, "1.3"},
		{9990000, "9.9"}, {10e6, "10"}, {123456789, "123"},
	} {
		if got := fmtNSAsMS(tc.ns); got != tc.want {
			t.Errorf("fmtNSAsMS(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := fmtSeconds(2.9427); got != "2.942s" {
		t.Errorf("fmtSeconds(2.9427) = %q", got)
	}
}

// TestPacer checks every cycle's goal in gctrace against the pacer's formula applied to the
// previous cycle: goal = live + (live + stacks + globals) x GOGC/100, at least 4 MiB x
// GOGC/100; and that each cycle started between 45/64 and 61/64 of the way to it.
func TestPacer(t *testing.T) {
	for _, shape := range []Shape{Healthy, GCPressure, HeapLeak} {
		for seed := uint64(1); seed <= 3; seed++ {
			s, tr := generate(t, seed, Spec{Shape: shape, Vantage: Run, Window: time.Minute})
			gogc := float64(tr.Params.GOGC) / 100
			for i := 1; i < len(s.GC); i++ {
				prev, c := s.GC[i-1].Cycle, s.GC[i].Cycle
				live := float64(prev.HeapLive)
				want := math.Max(live+(live+float64(prev.Stacks+prev.Globals))*gogc, heapMinimum*gogc)
				// The line's MiB are truncated: allow for it, scaled by GOGC.
				if slack := (3 + 3*gogc) * mib; math.Abs(float64(c.Goal)-want) > slack {
					t.Errorf("%s seed %d cycle %d: goal %d MiB, the pacer gives %.1f MiB from live %d MiB (GOGC=%d)",
						shape, seed, c.N, c.Goal>>20, want/mib, prev.HeapLive>>20, tr.Params.GOGC)
				}
				lo := live + 45.0/64*(float64(c.Goal)-live) - 2*mib
				if !c.Forced && (float64(c.HeapStart) < lo || c.HeapStart > c.Goal+mib) {
					t.Errorf("%s seed %d cycle %d: started at %d MiB, goal %d MiB, live before %d MiB", shape, seed, c.N,
						c.HeapStart>>20, c.Goal>>20, prev.HeapLive>>20)
				}
			}
		}
	}
}

// TestGCRateFollowsAllocation checks the frequency model on the generated data: cycles in the
// window ~= bytes allocated / the mean distance from live to the start of the next cycle,
// with the allocation read from the session's MemStats samples and the distances from its
// gctrace lines.
func TestGCRateFollowsAllocation(t *testing.T) {
	for _, shape := range []Shape{Healthy, GCPressure} {
		for seed := uint64(1); seed <= 4; seed++ {
			s, _ := generate(t, seed, Spec{Shape: shape, Vantage: Run, Window: 3 * time.Minute})
			var gos []*session.GoMem
			for _, smp := range s.Samples {
				if smp.Go != nil {
					gos = append(gos, smp.Go)
				}
			}
			first, last := gos[0], gos[len(gos)-1]
			allocated := float64(last.AllocBytesTotal - first.AllocBytesTotal)
			cycles := float64(last.GCCycles - first.GCCycles)
			var dist float64
			var n int
			for i := 1; i < len(s.GC); i++ {
				if c := s.GC[i].Cycle; uint64(c.N) > first.GCCycles && uint64(c.N) <= last.GCCycles {
					dist += float64(c.HeapStart) - float64(s.GC[i-1].HeapLive) + float64(c.HeapEnd-c.HeapStart)
					n++
				}
			}
			if n < 5 {
				t.Fatalf("%s seed %d: only %d cycles in the window", shape, seed, n)
			}
			predicted := allocated / (dist / float64(n))
			t.Logf("%s seed %d: %.0f cycles, %.0f predicted from %.1f MiB/s over a %.1f MiB mean distance",
				shape, seed, cycles, predicted, allocated/180/mib, dist/float64(n)/mib)
			// gctrace's MiB are truncated: a few MiB of distance lose up to a MiB each.
			if math.Abs(cycles-predicted) > 0.2*cycles+2 {
				t.Errorf("%s seed %d: %.0f cycles for %.0f predicted", shape, seed, cycles, predicted)
			}
		}
	}
}

// TestLeakShowsInProfiles checks that a leak of R MiB/min grows the leak site's inuse_space
// by about R per minute (the profiles are sampled, so each session is noisy: the sum over
// many must be close) and the marked live heap too.
func TestLeakShowsInProfiles(t *testing.T) {
	var sumSlope, sumRate float64
	for seed := uint64(1); seed <= 16; seed++ {
		s, tr := generate(t, seed, Spec{Shape: HeapLeak, Vantage: Run, Window: 3 * time.Minute})
		fn := tr.Culprits[KindHeapLeak]
		heaps := s.ProfilesOf(session.KindHeap, true)
		a, b := readProfile(t, s.Session, heaps[1]), readProfile(t, s.Session, heaps[len(heaps)-1])
		dt := b.TimeNanos - a.TimeNanos
		slope := float64(siteValue(t, b, "inuse_space", fn)-siteValue(t, a, "inuse_space", fn)) / (float64(dt) / 60e9)
		rate := tr.Params.LeakRate * 60
		sumSlope += slope
		sumRate += rate
		// The marked live heap, from gctrace, grows with the leak.
		g0, g1 := s.GC[len(s.GC)/4], s.GC[len(s.GC)-1]
		liveSlope := (float64(g1.HeapLive) - float64(g0.HeapLive)) / (g1.Time.Sub(g0.Time).Minutes())
		t.Logf("seed %d: leak %.1f MiB/min; %s inuse grows %.1f MiB/min; marked live %.1f MiB/min",
			seed, rate/mib, fn, slope/mib, liveSlope/mib)
		if rate >= 10*mib && math.Abs(slope-rate) > 0.25*rate {
			t.Errorf("seed %d: a %.1f MiB/min leak grows its site by %.1f MiB/min", seed, rate/mib, slope/mib)
		}
		// Objects allocated while marking count as marked live: the bigger the heap, the longer
		// the mark and the more it over-reports.
		if rate >= 10*mib && math.Abs(liveSlope-rate) > 0.25*rate+2*mib {
			t.Errorf("seed %d: a %.1f MiB/min leak grows the marked live heap by %.1f MiB/min", seed, rate/mib, liveSlope/mib)
		}
	}
	if r := sumSlope / sumRate; r < 0.9 || r > 1.1 {
		t.Errorf("over 16 sessions the leak sites grew %.2f times the leak rates", r)
	}
}

// TestSpikeShowsInProfiles checks that the spike site's alloc_space grows by the spike's
// height for each spike, and that a spike's data shows in inuse_space while it lasts.
func TestSpikeShowsInProfiles(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		s, tr := generate(t, seed, Spec{Shape: Spikes, Vantage: Run, Window: 3 * time.Minute})
		p := tr.Params
		fn := tr.Culprits[KindTransientSpike]
		if fn == "" {
			t.Fatalf("seed %d: a spike shape without a spike culprit: %+v", seed, tr)
		}
		heaps := s.ProfilesOf(session.KindHeap, true)
		last := readProfile(t, s.Session, heaps[len(heaps)-1])
		allocated := float64(siteValue(t, last, "alloc_space", fn))
		// Spikes whose allocation finished before the last GC before the snapshot, give or
		// take the one in progress.
		at := float64(last.TimeNanos-s.Manifest.GCTraceBase.UnixNano()) / 1e9
		done := math.Floor((at-p.SpikePhase-p.SpikeRise)/p.SpikePeriod) + 1
		t.Logf("seed %d: %.1f spikes of %.0f MiB allocated; %.0f completed by %.0fs", seed, allocated/p.SpikeHeight, p.SpikeHeight/mib, done, at)
		if allocated < (done-1)*p.SpikeHeight*0.95 || allocated > (done+1)*p.SpikeHeight*1.05 {
			t.Errorf("seed %d: the spike site allocated %.0f MiB, want about %.0f x %.0f MiB", seed, allocated/mib, done, p.SpikeHeight/mib)
		}
	}
}

// TestGoroutineLeakGrows checks the leaking group of the goroutine profiles against the rate.
func TestGoroutineLeakGrows(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		s, tr := generate(t, seed, Spec{Shape: GoroutineLeak, Vantage: Profiles, Window: time.Minute})
		fn := tr.Culprits[KindGoroutineLeak]
		gors := s.ProfilesOf(session.KindGoroutine, true)
		a, b := readProfile(t, s.Session, gors[0]), readProfile(t, s.Session, gors[len(gors)-1])
		got := float64(siteValue(t, b, "goroutine", fn) - siteValue(t, a, "goroutine", fn))
		want := tr.Params.GoroutineLeakRate * float64(b.TimeNanos-a.TimeNanos) / 1e9
		if math.Abs(got-want) > 1.5 {
			t.Errorf("seed %d: %s grew by %.0f goroutines, want %.1f", seed, fn, got, want)
		}
	}
}

// TestMemoryAccounting checks the agent's samples against each other: RSS is the runtime's
// resident memory plus LazyFree plus memory outside Go plus the binary, and VmHWM never falls
// behind RSS.
func TestMemoryAccounting(t *testing.T) {
	for _, shape := range []Shape{NonGo, Retention, Spikes} {
		s, tr := generate(t, 2, Spec{Shape: shape, Vantage: WatchAgent, Window: time.Minute})
		var hwm uint64
		var lazyMax float64
		for _, smp := range s.Samples {
			pr, g := smp.Proc, smp.Go
			if pr.HWMBytes < pr.RSSBytes || pr.HWMBytes < hwm {
				t.Fatalf("%s: VmHWM %d below RSS %d or falling from %d", shape, pr.HWMBytes, pr.RSSBytes, hwm)
			}
			hwm = pr.HWMBytes
			outside := float64(pr.RSSAnonBytes) - float64(g.RuntimeResident()) - float64(pr.LazyFreeBytes) - 1.5*mib
			at := float64(smp.Time.Sub(s.Manifest.Start))/1e9 + tr.Params.Uptime
			want := math.Min(tr.Params.NonGoBase+tr.Params.NonGoRate*at, nonGoCap)
			if math.Abs(outside-want) > 0.5*mib+tr.Params.NonGoRate*1.1 {
				t.Fatalf("%s at %.1fs: %.1f MiB of RSS outside Go, want %.1f", shape, at, outside/mib, want/mib)
			}
			lazyMax = math.Max(lazyMax, float64(pr.LazyFreeBytes))
		}
		if shape == Retention && lazyMax < tr.Params.SpikeHeight*0.5 {
			t.Errorf("retention: LazyFree peaked at %.0f MiB after batches of %.0f MiB", lazyMax/mib, tr.Params.SpikeHeight/mib)
		}
		if shape != Retention && lazyMax != 0 {
			t.Errorf("%s: LazyFree %.0f MiB without MADV_FREE", shape, lazyMax/mib)
		}
	}
}

// TestTruthConsistent checks every shape, vantage point and window: the truth's kinds are
// disjoint, each culprit is in the profiles, and a healthy service forbids every kind.
func TestTruthConsistent(t *testing.T) {
	for _, shape := range Shapes {
		for _, v := range Vantages {
			for _, w := range WindowsOf(shape) {
				s, tr := generate(t, 11, Spec{Shape: shape, Vantage: v, Window: w})
				for _, k := range tr.Kinds {
					if slices.Contains(tr.Absent, k) || slices.Contains(tr.Unobservable, k) {
						t.Errorf("%s/%s/%v: %s both required and not", shape, v, w, k)
					}
				}
				if len(tr.Unobservable) > 0 && v != Profiles && v != Burst {
					t.Errorf("%s/%s/%v: %v unobservable from a vantage point with samples", shape, v, w, tr.Unobservable)
				}
				if shape == Healthy && (len(tr.Absent) != len(Kinds) || len(tr.Kinds) != 0) {
					t.Errorf("healthy/%s/%v: kinds %v, absent %v", v, w, tr.Kinds, tr.Absent)
				}
				for k, fn := range tr.Culprits {
					if !slices.Contains(tr.Kinds, k) {
						t.Errorf("%s/%s/%v: culprit of %s, which is not required", shape, v, w, k)
					}
					kind, typ := session.KindHeap, "alloc_space"
					if k == KindGoroutineLeak && shape != LibraryGoroutineLeak && shape != SteadyGoroutineLeak { // a library's goroutines: the program's code allocated through it
						kind, typ = session.KindGoroutine, "goroutine"
					}
					refs := s.ProfilesOf(kind, true)
					if siteValue(t, readProfile(t, s.Session, refs[len(refs)-1]), typ, fn) == 0 {
						t.Errorf("%s/%s/%v: culprit %s of %s is not in the last %s profile", shape, v, w, fn, k, kind)
					}
				}
			}
		}
	}
}
