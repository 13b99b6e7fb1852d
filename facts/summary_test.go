package facts

import (
	"math"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

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
		return Summarize(ev)
	}
	idle, busy := build(0), build(0.5)
	if math.Abs(idle.GCCPUFraction-0.1) > 1e-6 || math.Abs(busy.GCCPUFraction-0.1) > 1e-6 {
		t.Errorf("GC CPU share: %.3f on an idle machine, %.3f on a busy one; want 0.100 on both", idle.GCCPUFraction, busy.GCCPUFraction)
	}
	if math.Abs(busy.CPUContention-0.5) > 1e-6 || idle.CPUContention != 0 {
		t.Errorf("contention %.3f busy, %.3f idle; want 0.5 and 0", busy.CPUContention, idle.CPUContention)
	}
}
