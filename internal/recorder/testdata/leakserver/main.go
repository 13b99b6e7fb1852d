// Command leakserver serves net/http/pprof and leaks goroutines at a steady rate: each call
// of lookup gives up waiting for its worker, which then blocks forever sending its answer
// on a channel nobody can reach. The goroutineleak tests build it with Go 1.27 (Go 1.26
// with GOEXPERIMENT=goroutineleakprofile serves the profile too).
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

// lookup asks a worker for an answer and gives up after a millisecond; the worker's send
// then blocks forever.
//
//go:noinline
func lookup() int {
	ch := make(chan int)
	go func() { ch <- slowAnswer() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Millisecond):
		return -1
	}
}

func slowAnswer() int {
	time.Sleep(20 * time.Millisecond)
	return 42
}

func main() {
	rate := flag.Int("leaks", 100, "goroutines leaked per second")
	flag.Parse()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		for range tick.C {
			for range *rate / 10 {
				lookup()
			}
		}
	}()
	http.Serve(l, nil)
}
