// Command redis is a service whose handler makes a go-redis client with redis.NewClient for
// every request and, unless -fixed, never closes it: each client's connection pool keeps its
// reaper goroutine. Its Redis server is miniredis in the same binary, started as a child
// (-backend).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis/v8"
)

type service struct {
	addr  string
	fixed bool
}

// visits counts one more visit of a page and returns the count.
func (s *service) visits(ctx context.Context, page int) (int64, error) {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr})
	if s.fixed {
		defer rdb.Close()
	}
	return rdb.Incr(ctx, "visits:"+strconv.Itoa(page%100)).Result()
}

func (s *service) call(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	n, err := s.visits(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	fmt.Fprintln(w, n)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	withPprof := flag.Bool("pprof", true, "serve net/http/pprof")
	fixed := flag.Bool("fixed", false, "close each client when done")
	backend := flag.String("backend", "", "serve Redis (miniredis) on this address (the child)")
	flag.Parse()
	if *backend != "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr(*backend); err != nil {
			log.Fatal(err)
		}
		select {}
	}
	raddr, err := startBackend()
	if err != nil {
		log.Fatal(err)
	}
	s := &service{addr: raddr, fixed: *fixed}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /call/{id}", s.call)
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// startBackend starts this binary as the Redis server, in this process's group, and waits
// until it accepts connections.
func startBackend() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(exe, "-backend", addr)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, nil
		}
	}
	return "", fmt.Errorf("the Redis server on %s did not start", addr)
}
