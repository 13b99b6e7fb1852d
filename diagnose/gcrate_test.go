package diagnose

import (
	"math"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
)

// A GC running 8 times a second whose CPU time no source measured (Prometheus's default
// metrics): a suspected gc-overhead with the pacer's advice, never a confirmed warning; at a
// calm rate, nothing.
func TestGCRateWithoutCPU(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	build := func(perSecond float64) *evidence.Evidence {
		ev := evidence.New("prometheus", evidence.Target{}, evidence.Options{})
		cycles, alloc := evidence.NewCounter(evidence.SourceMemStats), evidence.NewCounter(evidence.SourceMemStats)
		live, rss := evidence.NewGauge(evidence.SourceMemStats, 0), evidence.NewGauge(evidence.SourceProc, 0)
		for i := 0; i <= 240; i++ { // one hour at 15 s
			at := t0.Add(time.Duration(i) * 15 * time.Second)
			cycles.Add(at, perSecond*15*float64(i))
			alloc.Add(at, perSecond*40e6*15*float64(i)) // 40 MB per cycle: a 20 MB heap at GOGC=100
			live.Add(at, 20e6)
			rss.Add(at, 80e6)
		}
		ev.GCCycles, ev.AllocBytes, ev.Live, ev.RSS = cycles.Series(), alloc.Series(), live.Series(), rss.Series()
		ev.Pacer.GOGC = 100
		ev.Gap(evidence.GapGCCPU, "the default Go metrics carry no GC CPU time")
		ev.Finish(evidence.Options{})
		return ev
	}
	d := Diagnose(build(8), Options{})
	var got *Finding
	for i := range d.Findings {
		if d.Findings[i].Kind == KindGCOverhead {
			got = &d.Findings[i]
		}
	}
	if got == nil {
		t.Fatalf("no gc-overhead finding at 8 GC/s: %+v (not judged: %+v)", d.Findings, d.NotJudged)
	}
	if got.Confidence != Suspected || got.Severity != Info {
		t.Errorf("gc-overhead is %s/%s, want suspected/info: the GC's CPU was never measured", got.Confidence, got.Severity)
	}
	if got.AdviceEnv["GOGC"] == "" || got.Evidence["gc_per_second"] < 7.9 {
		t.Errorf("want the pacer's GOGC advice and the measured rate: %+v", got)
	}
	for _, f := range Diagnose(build(0.5), Options{}).Findings {
		if f.Kind == KindGCOverhead {
			t.Errorf("gc-overhead at 0.5 GC/s: %+v", f)
		}
	}
}

// A GC is idle (nothing to tune) only when it both runs rarely and costs little CPU: a light
// load with frequent cycles scales with traffic, whatever this machine's speed made of it.
func TestGCIdle(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		cores      float64 // GC CPU seconds per second
		perSecond  float64
		wantIdling bool
	}{
		{"rare and cheap", 0.002, 0.2, true},
		{"frequent, cheap on this machine", 0.009, 6, false},
		{"rare, expensive", 0.3, 0.5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &evidence.Evidence{}
			for i := 0; i <= 60; i++ {
				at := t0.Add(time.Duration(i) * time.Second)
				ev.GCCPU.Points = append(ev.GCCPU.Points, evidence.Point{T: at, V: tc.cores * float64(i)})
			}
			if got := gcIdle(facts.Of(ev), Summary{GCPerSecond: tc.perSecond}); got != tc.wantIdling {
				t.Errorf("gcIdle = %v, want %v", got, tc.wantIdling)
			}
		})
	}
}

// The runtime counts GC CPU in wall-clock time on a P: on a machine where the process's
// threads waited for a CPU half the time they could run, the GC cost half what the runtime
// says, and its share of the process's CPU is the same as on an idle machine.
func TestGCCPUCorrectedForContention(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	build := func(waitShare float64) Summary {
		ev := evidence.New("run", evidence.Target{}, evidence.Options{})
		gc, cycles, cpu := evidence.NewCounter(evidence.SourceGCTrace), evidence.NewCounter(evidence.SourceGCTrace), evidence.NewCounter(evidence.SourceProc)
		run, wait := evidence.NewCounter(evidence.SourceProc), evidence.NewCounter(evidence.SourceProc)
		for i := 0; i <= 60; i++ {
			at := t0.Add(time.Duration(i) * time.Second)
			// The process really uses 0.5 cores, 0.05 of them GC: 10%. The runtime's wall-clock
			// count of the GC inflates with the wait.
			cpu.Add(at, 0.5*float64(i))
			gc.Add(at, 0.05/(1-waitShare)*float64(i))
			cycles.Add(at, 4*float64(i))
			run.Add(at, 0.5*float64(i))
			wait.Add(at, 0.5*waitShare/(1-waitShare)*float64(i))
		}
		ev.GCCPU, ev.GCCycles, ev.ProcessCPU, ev.SchedRun, ev.SchedWait = gc.Series(), cycles.Series(), cpu.Series(), run.Series(), wait.Series()
		ev.Finish(evidence.Options{})
		return facts.Summarize(ev)
	}
	idle, busy := build(0), build(0.5)
	if math.Abs(idle.GCCPUFraction-0.1) > 1e-6 || math.Abs(busy.GCCPUFraction-0.1) > 1e-6 {
		t.Errorf("GC CPU share: %.3f on an idle machine, %.3f on a busy one; want 0.100 on both", idle.GCCPUFraction, busy.GCCPUFraction)
	}
	if math.Abs(busy.CPUContention-0.5) > 1e-6 || idle.CPUContention != 0 {
		t.Errorf("contention %.3f busy, %.3f idle; want 0.5 and 0", busy.CPUContention, idle.CPUContention)
	}
}

// On a machine so busy that the process waited for a CPU 65% of its runnable time, the GC's
// share after the correction (12%) may be 9%: no warning rests on it. On a quiet machine the
// same share is a warning's.
func TestGCShareSure(t *testing.T) {
	if got := gcShareSure(Summary{GCCPUFraction: 0.12, CPUContention: 0.65}); got >= gcWarnCPU {
		t.Errorf("busy: %.3f, want under the warning's %.2f", got, gcWarnCPU)
	}
	if got := gcShareSure(Summary{GCCPUFraction: 0.12}); got != 0.12 {
		t.Errorf("quiet: %.3f, want the share itself", got)
	}
	if got := gcShareSure(Summary{GCCPUFraction: 0.40, CPUContention: 0.5}); got < gcWarnCPU {
		t.Errorf("busy, GC at 40%%: %.3f, still a warning's", got)
	}
}
