package evidence

import (
	"math"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// TestMemStatsGCCPUOfTheLastGC: MemStats' GC CPU fraction is computed at the end of each GC, of
// the CPU available from the start to then, and stays until the next GC. A process whose GC
// did not run in the window (its start-up's two GCs took half of its first second) spent no
// GC CPU in it; one whose GC ran spent what the fraction's two figures, each of its own GC's
// end, differ by.
func TestMemStatsGCCPUOfTheLastGC(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	started := t0.Add(-time.Minute) // build's process start
	samples := func(gcs []struct {
		cycles uint64
		frac   float64
		end    time.Time
	}) []session.Sample {
		var out []session.Sample
		for i, g := range gcs {
			out = append(out, session.Sample{Time: t0.Add(time.Duration(i) * 10 * time.Second), Go: &session.GoMem{
				Source: "memstats", GCCycles: g.cycles, GCCPUFraction: g.frac, LastGCUnixNano: uint64(g.end.UnixNano()), GOMAXPROCS: 2}})
		}
		return out
	}
	type gc = struct {
		cycles uint64
		frac   float64
		end    time.Time
	}
	startup := gc{2, 0.25, started.Add(time.Second)} // 0.5 CPU-s of GC in 2 CPU-s available
	for _, tc := range []struct {
		name string
		gcs  []gc
		want float64 // GC CPU-seconds over the window
	}{
		{"no GC in the window", []gc{startup, startup, startup, startup}, 0},
		// A GC 65 s after the start that took 0.13 CPU-s: 0.63 of 130 available then.
		{"one GC in the window", []gc{startup, startup, {3, 0.63 / 130, started.Add(65 * time.Second)}, {3, 0.63 / 130, started.Add(65 * time.Second)}}, 0.13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, _ := build(t, samples(tc.gcs), nil)
			if got := ev.GCCPU.Increase(); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("GC CPU over the window %.4f s, want %.4f (readings %v)", got, tc.want, ev.GCCPU.Points)
			}
		})
	}
}
