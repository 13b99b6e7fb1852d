// fleet-service is a small Go service for the fleet end-to-end test: it serves
// client_golang's default registry on /metrics (and net/http/pprof) on loopback and behaves
// as -mode says: a heap that leaks, goroutines that leak, GC pressure, or a healthy steady
// state. It prints its URL on its first line.
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
	"regexp"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

var (
	sink   []byte
	leaked [][]byte
	held   []*node
)

// node makes a pointer-rich live heap, which the GC must trace.
type node struct {
	next    *node
	payload [48]byte
}

func main() {
	mode := flag.String("mode", "healthy", "heap-leak, goroutine-leak, gc-pressure or healthy")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *mode == "gc-pressure" {
		// Many services expose runtime/metrics too: the GC's CPU time is among them.
		prometheus.Unregister(collectors.NewGoCollector())
		prometheus.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.MetricsGC, collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/cpu/classes/`)})))
	}
	http.Handle("/metrics", promhttp.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	fmt.Printf("fleet-service %s: metrics on http://%s/metrics\n", *mode, ln.Addr())

	switch *mode {
	case "heap-leak":
		every(ctx, 100*time.Millisecond, func() {
			garbage(2 << 20)
			b := make([]byte, 128<<10) // 1.25 MiB/s kept for good
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			leaked = append(leaked, b)
		})
	case "goroutine-leak":
		block := make(chan struct{})
		every(ctx, 100*time.Millisecond, func() {
			garbage(2 << 20)
			go func() { <-block }() // 10 per second, never released
		})
	case "gc-pressure":
		hold(1 << 19) // 32 MiB of nodes
		for ctx.Err() == nil {
			for range 1000 {
				sink = make([]byte, 256)
			}
		}
	default:
		hold(1 << 18)
		every(ctx, 100*time.Millisecond, func() { garbage(2 << 20) })
	}
}

// every runs f every d until ctx is done.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// garbage allocates n bytes that die at once.
func garbage(n int) {
	for ; n > 0; n -= 32 << 10 {
		sink = make([]byte, 32<<10)
	}
}

// hold keeps n nodes live.
func hold(n int) {
	held = make([]*node, n)
	for i := range held {
		held[i] = &node{}
		if i > 0 {
			held[i].next = held[i-1]
		}
	}
}
