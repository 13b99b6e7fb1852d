// Command bench-agent measures what memdoctor's agent costs a service, against no agent and
// against two peers: grafana/pyroscope-go pushing heap and goroutine profiles (to a local
// sink that discards them) and mosn.io/holmes with its mem, goroutine and GC-heap dumpers.
//
//	bench-agent compare [-runs 5] [-requests 200000] [-concurrency 8]   the whole comparison
//	bench-agent serve -config NAME                                      one service (internal)
//
// compare runs every configuration -runs times, each run in a fresh service process, the
// configurations interleaved (A B C D, A B C D, ...) so that drift on the machine spreads
// evenly. A run is a fixed number of requests from a loopback load generator in the compare
// process: JSON orders in, JSON invoices out. It reports, per configuration, the median and
// the spread (min..max as ± % of the median) of throughput, p50 and p99 latency, the
// service's CPU seconds and its peak RSS, and the change against no agent.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench-agent compare|serve [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "compare":
		err = compare(os.Args[2:])
	case "serve":
		err = serve(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want compare or serve", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-agent:", err)
		os.Exit(1)
	}
}
