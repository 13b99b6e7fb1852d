package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// A GC is idle (nothing to tune) only when it both runs rarely and costs little CPU: a light
// load with frequent cycles scales with traffic, whatever this machine's speed made of it.
func TestGCIdle(t *testing.T) {
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
			fs := &facts.Facts{GC: facts.GC{Cores: tc.cores}}
			if got := gcIdle(fs, facts.Summary{GCPerSecond: tc.perSecond}, &Default.GC); got != tc.wantIdling {
				t.Errorf("gcIdle = %v, want %v", got, tc.wantIdling)
			}
		})
	}
}

// On a machine so busy that the process waited for a CPU 65% of its runnable time, the GC's
// share after the correction (12%) may be 9%: no warning rests on it. On a quiet machine the
// same share is a warning's.
func TestGCShareSure(t *testing.T) {
	if got := gcShareSure(facts.Summary{GCCPUFraction: 0.12, CPUContention: 0.65}, &Default.GC); got >= Default.GC.WarnCPU {
		t.Errorf("busy: %.3f, want under the warning's %.2f", got, Default.GC.WarnCPU)
	}
	if got := gcShareSure(facts.Summary{GCCPUFraction: 0.12}, &Default.GC); got != 0.12 {
		t.Errorf("quiet: %.3f, want the share itself", got)
	}
	if got := gcShareSure(facts.Summary{GCCPUFraction: 0.40, CPUContention: 0.5}, &Default.GC); got < Default.GC.WarnCPU {
		t.Errorf("busy, GC at 40%%: %.3f, still a warning's", got)
	}
}

// TestGCOverheadNeedsAPacedCycle: a window where the pacer started no GC (none ran, or only
// forced ones: runtime.GC, memdoctor's own heap?gc=1) has nothing GOGC would change, whatever
// GC CPU share a start-up left in the runtime's figures.
func TestGCOverheadNeedsAPacedCycle(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		count, forced uint64
	}{
		{"no cycle", 0, 0},
		{"only forced cycles", 6, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &facts.Facts{
				GC:       facts.GC{CPUKnown: true, Cores: 0.5, MedianLive: 8 << 20, AllocRate: 400 << 10},
				GCCycles: facts.Series{Points: []facts.Point{{T: t0, V: 2}, {T: t0.Add(time.Minute), V: 2 + float64(tc.count)}}},
				Summary:  facts.Summary{GCCount: tc.count, GCForcedCount: tc.forced, GCCPUFraction: 1, GCCPUOfAvailableFraction: 0.25},
			}
			if out := gcOverhead(fs, &Default); len(out.verdicts) != 0 {
				t.Errorf("verdicts %+v, want none", out.verdicts)
			}
		})
	}
}
