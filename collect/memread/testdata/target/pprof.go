//go:build withpprof

package main

import (
	"flag"
	"net"
	"net/http"
	_ "net/http/pprof"
	"sync/atomic"
	"time"
)

// stallAfter makes the pprof server answer that many requests and then none (each later one
// waits until the program exits): a service whose pprof is starved or stuck.
var (
	stallAfter = flag.Int("stall-after", -1, "answer this many requests, then none (-1: answer all)")
	stallAt    = flag.Duration("stall-at", 0, "answer for this long after the start, then nothing (0: answer all)")
)

func servePprof() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	var served atomic.Int64
	start := time.Now()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if *stallAfter >= 0 && served.Add(1) > int64(*stallAfter) || *stallAt > 0 && time.Since(start) > *stallAt {
			select {} // never answers; the program's exit ends it
		}
		http.DefaultServeMux.ServeHTTP(w, r)
	})
	go http.Serve(ln, h)
	return ln.Addr().String()
}
