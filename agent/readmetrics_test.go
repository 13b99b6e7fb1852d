package agent

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/memdoctor/memdoctor/agent/record"
)

var heapSink [][]byte

func TestMetricsReaderReadsTheRuntime(t *testing.T) {
	mr := newMetricsReader()
	for _, name := range wantedMetrics {
		if name == mPausesGCLegacy || name == mGOMemLimit {
			continue // replaced in Go 1.22; gomemlimit since 1.19
		}
		if !mr.has(name) {
			t.Errorf("%s: not read on %s", name, runtime.Version())
		}
	}
	for range 64 {
		heapSink = append(heapSink, make([]byte, 1<<20))
	}
	runtime.GC() // the test, not the agent, forces a cycle so that the GC figures exist
	var g record.GoMem
	mr.read(&g)
	heapSink = nil
	if g.Source != "runtime/metrics" {
		t.Errorf("source %q", g.Source)
	}
	sum := g.HeapObjectsBytes + g.HeapUnusedBytes + g.HeapFreeBytes + g.HeapReleasedBytes +
		g.HeapStacksBytes + g.OSStacksBytes + g.MetadataBytes + g.OtherBytes
	if sum != g.TotalBytes {
		t.Errorf("the memory classes add up to %d, total is %d", sum, g.TotalBytes)
	}
	// live may over-report a little (facts §2); it cannot be far above what the heap holds.
	if g.HeapLiveBytes < 64<<20 || g.HeapLiveBytes > g.HeapObjectsBytes+1<<20 {
		t.Errorf("live heap %d with 64 MiB held, heap objects %d", g.HeapLiveBytes, g.HeapObjectsBytes)
	}
	if g.HeapGoalBytes <= g.HeapLiveBytes || g.GCCycles == 0 || g.GCForcedCycles == 0 {
		t.Errorf("goal %d, cycles %d, forced %d", g.HeapGoalBytes, g.GCCycles, g.GCForcedCycles)
	}
	if g.GCTotalSeconds <= 0 || g.CPUTotalSeconds <= g.GCTotalSeconds || g.GCAssistSeconds > g.GCTotalSeconds {
		t.Errorf("gc cpu %v (assist %v) of %v", g.GCTotalSeconds, g.GCAssistSeconds, g.CPUTotalSeconds)
	}
	if g.PauseTotalSeconds <= 0 || g.PauseTotalSeconds > 10 {
		t.Errorf("pause total %v s", g.PauseTotalSeconds)
	}
	if g.Goroutines < 2 || g.GOMAXPROCS != runtime.GOMAXPROCS(0) {
		t.Errorf("goroutines %d, gomaxprocs %d", g.Goroutines, g.GOMAXPROCS)
	}
	if want := debug.SetGCPercent(-1); g.GOGC != want {
		t.Errorf("GOGC %d, want %d", g.GOGC, want)
	} else {
		var off record.GoMem
		mr.read(&off)
		if off.GOGC != -1 {
			t.Errorf("with GOGC=off the reading is %d, want -1", off.GOGC)
		}
		debug.SetGCPercent(want)
	}
	if g.GOMemLimitBytes != uint64(debug.SetMemoryLimit(-1)) {
		t.Errorf("gomemlimit %d", g.GOMemLimitBytes)
	}
}

func TestHistogramSum(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		counts  []uint64
		buckets []float64
		want    float64
	}{
		{[]uint64{2, 1}, []float64{0, 1, 3}, 2*0.5 + 2},
		{[]uint64{1, 1}, []float64{math.Inf(-1), 1, inf}, 1 + 1},
		{[]uint64{0, 0}, []float64{0, 1, 2}, 0},
		{[]uint64{5}, []float64{math.Inf(-1), inf}, 0},
		{[]uint64{3}, []float64{1}, 0}, // malformed: no upper bound
	} {
		if got := histogramSum(tc.counts, tc.buckets); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("histogramSum(%v, %v) = %v, want %v", tc.counts, tc.buckets, got, tc.want)
		}
	}
}

func TestGOGC(t *testing.T) {
	for _, tc := range []struct {
		v       uint64
		present bool
		want    int
	}{
		{100, true, 100}, {0, true, 0}, {math.MaxUint64, true, -1}, {50, false, 0},
	} {
		if got := gogc(tc.v, tc.present); got != tc.want {
			t.Errorf("gogc(%d, %v) = %d, want %d", tc.v, tc.present, got, tc.want)
		}
	}
}
