//go:build linux

package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/metrics"
	"syscall"
)

// Report is the target's own account of what it did: cumulative runtime/metrics figures, read
// when asked (SIGUSR1). Two reports of one process bound a window: their difference is what
// happened in it.
type Report struct {
	GCAuto, GCForced uint64  // /gc/cycles/{automatic,forced}
	AllocBytes       uint64  // /gc/heap/allocs:bytes
	LiveBytes        uint64  // /gc/heap/live:bytes
	GoalBytes        uint64  // /gc/heap/goal:bytes
	GCCPU            float64 // /cpu/classes/gc/total:cpu-seconds
	ScavengeCPU      float64 // /cpu/classes/scavenge/total:cpu-seconds
	UserCPU          float64 // /cpu/classes/user:cpu-seconds
	// The stop-the-world pauses, cumulative histograms of seconds: stopping (the time to stop
	// every goroutine) and total (stopping plus the stop itself), for the GC's and for the
	// rest's (ReadMemStats, goroutine profiles, ...). Buckets as [upper bound, count] pairs,
	// empty buckets left out.
	PausesTotalGC, PausesTotalOther, PausesStoppingGC, PausesStoppingOther [][2]float64
}

var names = []string{
	"/gc/cycles/automatic:gc-cycles",
	"/gc/cycles/forced:gc-cycles",
	"/gc/heap/allocs:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/cpu/classes/user:cpu-seconds",
	"/sched/pauses/total/gc:seconds",
	"/sched/pauses/total/other:seconds",
	"/sched/pauses/stopping/gc:seconds",
	"/sched/pauses/stopping/other:seconds",
}

func read() Report {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	f := func(i int) float64 {
		if s[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return s[i].Value.Float64()
	}
	h := func(i int) [][2]float64 {
		if s[i].Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		hist := s[i].Value.Float64Histogram()
		var out [][2]float64
		for j, c := range hist.Counts {
			if c > 0 {
				out = append(out, [2]float64{math.Min(hist.Buckets[j+1], 1e9), float64(c)})
			}
		}
		return out
	}
	return Report{GCAuto: u(0), GCForced: u(1), AllocBytes: u(2), LiveBytes: u(3), GoalBytes: u(4),
		GCCPU: f(5), ScavengeCPU: f(6), UserCPU: f(7),
		PausesTotalGC: h(8), PausesTotalOther: h(9), PausesStoppingGC: h(10), PausesStoppingOther: h(11)}
}

// reportOnSignal writes a Report as one JSON line to w on each SIGUSR1.
func reportOnSignal(w io.Writer) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		enc := json.NewEncoder(w)
		for range c {
			enc.Encode(read())
		}
	}()
}
