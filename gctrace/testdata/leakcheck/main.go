// Command leakcheck is the traced program of TestRealLeakCheck (built with Go 1.27): it leaks
// goroutines, allocates, writes the goroutineleak profile twice (each runs a GC cycle with
// leak detection), forces one ordinary GC, and prints its runtime metrics as JSON.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

var sink [][]byte

//go:noinline
func abandon() {
	ch := make(chan int)
	go func() { ch <- 1 }() // nobody will ever receive
}

func main() {
	for range 5 {
		abandon()
	}
	for i := 0; i < 2000; i++ {
		sink = append(sink, make([]byte, 32<<10))
		if len(sink) > 300 {
			sink = sink[:0]
		}
	}
	// No cycle of its own from here on: the forced ones only, so that the trace and the
	// metrics count the same cycles.
	debug.SetGCPercent(-1)
	time.Sleep(10 * time.Millisecond) // let the leaked goroutines block
	leak := pprof.Lookup("goroutineleak")
	if leak == nil {
		fmt.Fprintln(os.Stderr, "no goroutineleak profile in", runtime.Version())
		os.Exit(2)
	}
	leak.WriteTo(io.Discard, 0)
	runtime.GC()
	leak.WriteTo(io.Discard, 0)
	names := []string{"/gc/cycles/total:gc-cycles", "/gc/cycles/forced:gc-cycles"}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	out := map[string]uint64{}
	for _, s := range samples {
		out[s.Name] = s.Value.Uint64()
	}
	json.NewEncoder(os.Stdout).Encode(out)
	// A forced cycle returns once it is done, while the thread that ended it may still be
	// writing the cycle's trace line: let it finish before the process exits (a CI run cut
	// the last line).
	time.Sleep(200 * time.Millisecond)
}
