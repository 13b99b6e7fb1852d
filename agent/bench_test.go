package agent

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"
)

// The agent's steady cost is the sum of these operations at their rates: one sample a
// second, one GC hook call per GC cycle, one profile round every 15s. docs/performance.md's
// section turns them into a share of a core.

func benchAgent(b *testing.B) *Agent {
	a, err := Start(context.Background(), WithProfileInterval(time.Hour)) // a ring of an hour at 1s
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Stop(context.Background()) })
	for a.ring.len() == 0 {
		time.Sleep(time.Millisecond)
	}
	return a
}

// BenchmarkSample is one sample: runtime/metrics, /proc/self (status, smaps_rollup, stat),
// the cgroup, the ring, the triggers and the guard. Run from the benchmark's goroutine, as
// the agent's loop would.
func BenchmarkSample(b *testing.B) {
	a := benchAgent(b)
	b.ReportAllocs()
	for b.Loop() {
		a.sampleOnce()
	}
}

// BenchmarkGCHook is the work after each GC cycle: three metrics and the heap-jump check.
func BenchmarkGCHook(b *testing.B) {
	a := benchAgent(b)
	b.ReportAllocs()
	for b.Loop() {
		a.lastCycle = 0 // as if a new cycle had ended
		a.onGC()
	}
}

// BenchmarkProfileRound is one periodic round: a heap and a goroutine profile.
func BenchmarkProfileRound(b *testing.B) {
	a := benchAgent(b)
	b.ReportAllocs()
	for b.Loop() {
		a.periodicProfiles()
	}
}

// BenchmarkServeMetricsHour streams an hour of samples, as `memdoctor watch` pulls at start.
func BenchmarkServeMetricsHour(b *testing.B) {
	a := benchAgent(b)
	var s slot
	a.ring.latest(&s)
	for i := range 3600 {
		s.t = s.t.Add(time.Duration(i) * time.Second)
		a.ring.add(&s)
	}
	h := a.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/debug/memdoctor/metrics", nil)
		h.ServeHTTP(rec, req)
		io.Copy(io.Discard, rec.Body)
	}
}
