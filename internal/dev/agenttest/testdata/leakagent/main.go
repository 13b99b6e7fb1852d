// Command leakagent embeds the memdoctor agent, beside net/http/pprof, in a service that
// leaks goroutines: each lookup gives up waiting for its worker, which then blocks forever
// sending on a channel nobody can reach. It leaks a first batch before the agent starts, so
// that the agent's first goroutineleak profile holds them, then goes on leaking. The
// goroutineleak tests build it with Go 1.27.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

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
	first := flag.Int("first", 200, "goroutines leaked before the agent starts")
	rate := flag.Int("leaks", 100, "goroutines leaked per second after")
	flag.Parse()
	for range *first {
		lookup()
	}
	time.Sleep(100 * time.Millisecond) // the workers are blocked by now
	a, err := agent.Start(context.Background(), agent.WithSampleInterval(100*time.Millisecond), agent.WithGoroutineGrowth(50, 0.2))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", a.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			for range *rate / 10 {
				lookup()
			}
		}
	}()
	http.Serve(l, mux)
}
