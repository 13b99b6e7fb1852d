// e2e-target is the program the end-to-end tests run under memdoctor: it serves
// net/http/pprof on loopback, keeps a fixed live heap, makes steady garbage, and on SIGINT
// prints its own count of GC cycles (from runtime/metrics) so the test can compare it with
// what memdoctor recorded.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"
)

var (
	sink []byte
	held [][]byte // the live heap, reachable until exit
)

func main() {
	live := flag.Int("live-mib", 64, "live heap to hold, in MiB")
	rate := flag.Int("garbage-mib-per-s", 40, "garbage to make per second, in MiB")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.DefaultServeMux}
	go srv.Serve(ln)
	fmt.Printf("e2e-target: pprof on http://%s/debug/pprof/\n", ln.Addr())

	held = make([][]byte, *live)
	for i := range held {
		held[i] = make([]byte, 1<<20)
		for j := 0; j < len(held[i]); j += 4096 {
			held[i][j] = 1
		}
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	perTick := *rate * 1024 * 1024 / 100
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			for n := 0; n < perTick; n += 64 << 10 {
				sink = make([]byte, 64<<10)
			}
		}
	}
	srv.Close()
	// The count must be of cycles whose gctrace line is written. The runtime counts a cycle
	// before it prints its line, and the line is lost if the process exits between the two
	// (TestRunEndToEnd read 10 lines against a count of 11 once). Turning the GC off waits for
	// a cycle in progress to finish its mark and starts no other; stopping the world (as
	// ReadMemStats does) then waits for that cycle to print its line, which it does before it
	// lets the world be stopped again (runtime/mgc.go, gcMarkTermination).
	debug.SetGCPercent(-1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	fmt.Printf("e2e-target: gc_cycles=%d held=%d\n", s[0].Value.Uint64(), len(held))
}
