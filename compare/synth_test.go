package compare

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
)

// shape describes a synthetic session: GC cycles (as gctrace reports them) and samples every
// second of /proc and the Go runtime, with a small deterministic wobble.
type shape struct {
	seconds    int
	gcEvery    time.Duration // time between GC cycles
	live       func(t float64) float64
	rss        func(t float64) float64
	goroutines func(t float64) float64
	alloc      float64 // bytes per second
	gcCPU      float64 // CPU seconds per cycle
	assist     float64 // share of the GC's CPU in mark assists; 0 = 0.3
	restartAt  int     // seconds; 0 = none
	steadyRSS  bool    // RSS without the wobble
	// rounds, when set, is memdoctor's round: a heap snapshot every rounds from roundAt on,
	// each allocating roundAlloc bytes in the target as it is served.
	rounds, roundAt time.Duration
	roundAlloc      float64
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// wobble is a deterministic, irregular factor near 1.
func wobble(i int) float64 { return 1 + 0.04*math.Sin(float64(i)*2.3) + 0.03*math.Cos(float64(i)*0.7) }

func synth(sh shape) *evidence.Evidence {
	ev := evidence.New("run", evidence.Target{Name: "svc", Started: t0.Add(-time.Hour)}, evidence.Options{})
	cycles, cpu, assist, avail := evidence.NewCounter(evidence.SourceGCTrace), evidence.NewCounter(evidence.SourceGCTrace),
		evidence.NewCounter(evidence.SourceGCTrace), evidence.NewCounter(evidence.SourceGCTrace)
	live := evidence.NewGauge(evidence.SourceGCTrace, 1<<20)
	for _, c := range []*evidence.Builder{cycles, cpu, assist, avail} {
		c.Add(t0, 0)
	}
	end := t0.Add(time.Duration(sh.seconds) * time.Second)
	n := 0
	var usedCPU, assisted float64
	share := sh.assist
	if share == 0 {
		share = 0.3
	}
	for t := t0.Add(sh.gcEvery); !t.After(end); t = t.Add(sh.gcEvery) {
		n++
		s := t.Sub(t0).Seconds()
		usedCPU += sh.gcCPU * wobble(n)
		assisted += sh.gcCPU * wobble(n) * share * wobble(n+5)
		cycles.Add(t, float64(n))
		cpu.Add(t, usedCPU)
		assist.Add(t, assisted)
		avail.Add(t, 2*s)
		live.Add(t, math.Round(sh.live(s)*wobble(n+3)/(1<<20))*(1<<20))
	}
	rss, gor := evidence.NewGauge(evidence.SourceProc, 0), evidence.NewGauge(evidence.SourcePprofIndex, 1)
	proc, alloc := evidence.NewCounter(evidence.SourceProc), evidence.NewCounter(evidence.SourceMemStats)
	var allocated float64
	for i := 0; i <= sh.seconds; i++ {
		t := t0.Add(time.Duration(i) * time.Second)
		s := float64(i)
		if sh.restartAt > 0 && i == sh.restartAt {
			allocated, usedCPU = 0, 0 // a new process starts from zero
		}
		if sh.rounds > 0 && i > 0 {
			for r := t0.Add(sh.roundAt); !r.After(t); r = r.Add(sh.rounds) {
				if r.After(t.Add(-time.Second)) {
					alloc.Add(r, allocated+sh.alloc*wobble(i)*(1-t.Sub(r).Seconds()))
					allocated += sh.roundAlloc * wobble(i+7)
					alloc.Add(r.Add(10*time.Millisecond), allocated+sh.alloc*wobble(i)*(1-t.Sub(r).Seconds()))
					ev.Heaps = append(ev.Heaps, evidence.Snapshot{Kind: "heap", T: r, Path: "synthetic"})
				}
			}
		}
		allocated += sh.alloc * wobble(i)
		if sh.steadyRSS {
			rss.Add(t, sh.rss(s))
		} else {
			rss.Add(t, sh.rss(s)*wobble(i+1))
		}
		gor.Add(t, math.Round(sh.goroutines(s)))
		proc.Add(t, 0.5*s)
		alloc.Add(t, allocated)
	}
	ev.GCCycles, ev.GCCPU, ev.GCAssist, ev.AvailableCPU = cycles.Series(), cpu.Series(), assist.Series(), avail.Series()
	ev.Live, ev.RSS, ev.Goroutines, ev.ProcessCPU, ev.AllocBytes = live.Series(), rss.Series(), gor.Series(), proc.Series(), alloc.Series()
	ev.HWM = rss.Series()
	if sh.restartAt > 0 {
		ev.Restarts = []time.Time{t0.Add(time.Duration(sh.restartAt) * time.Second)}
	}
	ev.Start, ev.End = t0, end
	ev.Finish(evidence.Options{})
	return ev
}

func side(name string, sh shape) Side {
	ev := synth(sh)
	return Side{Name: name, Ev: ev, D: diagnose.Diagnose(ev, diagnose.Options{Now: func() time.Time { return t0 }})}
}

const mib = 1 << 20

func flat(v float64) func(float64) float64 { return func(float64) float64 { return v } }

// leaky grows its live heap by 1.5 MiB/s and its RSS with it; the GC runs every half second.
var leaky = shape{seconds: 60, gcEvery: 500 * time.Millisecond, live: func(s float64) float64 { return (32 + 1.5*s) * mib },
	rss: func(s float64) float64 { return (40 + 2*s) * mib }, goroutines: flat(20), alloc: 50 * mib, gcCPU: 0.004}

// fixed keeps a flat live heap; the GC runs every 2 s.
var fixed = shape{seconds: 45, gcEvery: 2 * time.Second, live: flat(30 * mib), rss: flat(60 * mib), goroutines: flat(20),
	alloc: 20 * mib, gcCPU: 0.004}
