//go:build linux

// Command target is the service bench/scrapecost measures: it serves net/http/pprof and holds
// a number of goroutines (blocked on a channel still reachable: not leaked), a number of
// leaked ones (blocked on a channel nobody can reach) and a live heap of a given size, all
// pointers, so that a GC cycle scans all of it.
//
// It prints its address on the first line of its standard output. On SIGUSR1 it prints one
// more line, a JSON object of its own runtime/metrics figures (report.go): what the watchcost
// harness reads at the start and the end of a window, from a watched and an unwatched twin
// alike.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"time"
)

var (
	wait = make(chan struct{}) // reachable from a global: its waiters are not leaked
	heap [][]*int
	one  int
)

//go:noinline
func leak() {
	ch := make(chan int)
	go func() { ch <- 1 }()
}

func main() {
	goroutines := flag.Int("goroutines", 1000, "goroutines blocked on a reachable channel")
	leaked := flag.Int("leaked", 100, "goroutines leaked")
	heapMiB := flag.Int("heap-mib", 64, "live heap, in MiB of 64 KiB blocks of pointers (the GC scans all of it)")
	flag.Parse()
	for range *goroutines {
		go func() { <-wait }()
	}
	for range *leaked {
		leak()
	}
	for range *heapMiB * 16 {
		block := make([]*int, 8192)
		for i := range block {
			block[i] = &one
		}
		heap = append(heap, block)
	}
	time.Sleep(50 * time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	reportOnSignal(os.Stdout)
	// A health check, as a load balancer or the kubelet probes a service: the watchcost
	// harness probes both twins alike, so that neither is idle as no service is (an idle Go
	// process runs its 2-minute GC up to a minute late: its sysmon sleeps while every P is
	// idle, and any request wakes it).
	http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	http.Serve(l, nil)
}
