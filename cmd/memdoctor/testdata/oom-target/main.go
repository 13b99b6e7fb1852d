// Command oom-target is the end-to-end tests' service that runs out of memory: it serves
// net/http/pprof on loopback, waits, then holds 4 MiB more every -every (in main.hoard, its
// pages touched) until the kernel's OOM killer ends it. With -join it first moves itself into
// a cgroup (writes its PID to that cgroup.procs file).
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

var held [][]byte

//go:noinline
func hoard() {
	b := make([]byte, 4<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	held = append(held, b)
}

func main() {
	wait := flag.Duration("wait", 3*time.Second, "how long to serve before growing")
	every := flag.Duration("every", 250*time.Millisecond, "how often to hold 4 MiB more")
	join := flag.String("join", "", "a cgroup.procs `FILE` to write the process's PID to first")
	flag.Parse()
	if *join != "" {
		if err := os.WriteFile(*join, []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("oom-target: pprof on http://%s/debug/pprof/\n", ln.Addr())
	go http.Serve(ln, nil)
	time.Sleep(*wait)
	for range time.Tick(*every) {
		hoard()
	}
}
