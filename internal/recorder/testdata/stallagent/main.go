// Command stallagent is a service that embeds the memdoctor agent (sampling every 100 ms)
// whose agent answers for -stall-at after the start and then never (each later request waits
// until the program exits: an agent starved of CPU by the service's own goroutines, made
// deterministic), while it leaks -leak goroutines a second, each parked for good in
// main.leaked. It prints "ready URL" and serves until its stdin closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/memdoctor/memdoctor/agent"
)

func main() {
	stallAt := flag.Duration("stall-at", 3*time.Second, "answer for this long, then nothing")
	leak := flag.Int("leak", 40, "goroutines leaked a second")
	flag.Parse()
	a, err := agent.Start(context.Background(), agent.WithSampleInterval(100*time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	h := a.Handler()
	mux := http.NewServeMux()
	mux.Handle("/debug/memdoctor/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) > *stallAt {
			select {} // never answers; the program's exit ends it
		}
		h.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, mux)
	if *leak > 0 {
		go leakEvery(*leak)
	}
	fmt.Printf("ready http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
}

var never = make(chan struct{})

// leakEvery starts n goroutines a second, none of which ever returns.
func leakEvery(n int) {
	for range time.Tick(time.Second / time.Duration(n)) {
		go leaked()
	}
}

//go:noinline
func leaked() { <-never }
