package scrape

import (
	"math"
	"runtime/metrics"
	"testing"
)

// readMetrics reads runtime/metrics samples by name (0 if absent).
func readMetrics(names ...string) map[string]uint64 {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	out := make(map[string]uint64, len(names))
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			out[x.Name] = x.Value.Uint64()
		}
	}
	return out
}

const (
	mGCTotal  = "/gc/cycles/total:gc-cycles"
	mGCForced = "/gc/cycles/forced:gc-cycles"
	mGoal     = "/gc/heap/goal:bytes"
	mLimit    = "/gc/gomemlimit:bytes"
)

func TestLiveMemStats(t *testing.T) {
	c := newClient(t, newPprofServer(t, "").URL)
	names := []string{mGCTotal, mGCForced, mGoal, mLimit}
	before := readMetrics(names...)
	ms, err := c.MemStats(testContext(t))
	after := readMetrics(names...)
	if err != nil {
		t.Fatalf("MemStats: %v", err)
	}
	checkMemStatsInvariants(t, ms)

	// The page was written by this process between the two reads.
	if n := uint64(ms.NumGC); n < before[mGCTotal] || n > after[mGCTotal] {
		t.Errorf("NumGC = %d, runtime/metrics says %d before and %d after", n, before[mGCTotal], after[mGCTotal])
	}
	if n := uint64(ms.NumForcedGC); n < before[mGCForced] || n > after[mGCForced] {
		t.Errorf("NumForcedGC = %d, runtime/metrics says %d before and %d after", n, before[mGCForced], after[mGCForced])
	}
	// Without a memory limit the goal only moves at a GC.
	if before[mGCTotal] == after[mGCTotal] && after[mLimit] == math.MaxInt64 && before[mGoal] == after[mGoal] {
		if ms.NextGC != after[mGoal] {
			t.Errorf("NextGC = %d, /gc/heap/goal:bytes = %d", ms.NextGC, after[mGoal])
		}
	} else {
		t.Log("a GC ran during the scrape (or a memory limit is set): NextGC not compared with /gc/heap/goal:bytes")
	}
	checkMaxRSS(t, c)
}

// checkMemStatsInvariants checks what runtime.ReadMemStats guarantees: its
// snapshot is taken with the world stopped, so these identities are exact.
func checkMemStatsInvariants(t *testing.T, ms MemStats) {
	t.Helper()
	eq := func(what string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %d != %d", what, got, want)
		}
	}
	le := func(what string, a, b uint64) {
		t.Helper()
		if a > b {
			t.Errorf("%s: %d > %d", what, a, b)
		}
	}
	if ms.Sys == 0 || ms.HeapSys == 0 || ms.NextGC == 0 || ms.Mallocs == 0 {
		t.Errorf("zero Sys, HeapSys, NextGC or Mallocs: %+v", ms)
	}
	eq("Alloc == HeapAlloc", ms.Alloc, ms.HeapAlloc)
	eq("HeapSys == HeapIdle+HeapInuse", ms.HeapSys, ms.HeapIdle+ms.HeapInuse)
	eq("HeapObjects == Mallocs-Frees", ms.HeapObjects, ms.Mallocs-ms.Frees)
	eq("Sys == sum of the *Sys fields", ms.Sys,
		ms.HeapSys+ms.StackSys+ms.MSpanSys+ms.MCacheSys+ms.BuckHashSys+ms.GCSys+ms.OtherSys)
	le("HeapAlloc <= HeapInuse", ms.HeapAlloc, ms.HeapInuse)
	le("HeapReleased <= HeapIdle", ms.HeapReleased, ms.HeapIdle)
	le("Alloc <= TotalAlloc", ms.Alloc, ms.TotalAlloc)
	le("StackInuse <= StackSys", ms.StackInuse, ms.StackSys)
	le("MSpanInuse <= MSpanSys", ms.MSpanInuse, ms.MSpanSys)
	le("MCacheInuse <= MCacheSys", ms.MCacheInuse, ms.MCacheSys)
	le("NumForcedGC <= NumGC", uint64(ms.NumForcedGC), uint64(ms.NumGC))
	if len(ms.PauseNs) != 256 || len(ms.PauseEnd) != 256 {
		t.Fatalf("len(PauseNs), len(PauseEnd) = %d, %d, want 256", len(ms.PauseNs), len(ms.PauseEnd))
	}
	if ms.NumGC > 0 {
		eq("LastGC == latest PauseEnd", ms.LastGC, ms.PauseEnd[(ms.NumGC+255)%256])
	}
	if ms.GCCPUFraction < 0 || ms.GCCPUFraction > 1 {
		t.Errorf("GCCPUFraction = %v, want within [0, 1]", ms.GCCPUFraction)
	}
}
