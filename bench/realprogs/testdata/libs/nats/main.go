// Command nats is a service whose handler connects to NATS with nats.Connect for every request
// and, unless -fixed, never closes the connection: each connection keeps its readLoop and
// flusher goroutines. Its NATS server is the same binary, started as a child (-backend).
package main

import (
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

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

type service struct {
	url   string
	fixed bool
}

// publish publishes one order event.
func (s *service) publish(id int) error {
	nc, err := nats.Connect(s.url)
	if err != nil {
		return err
	}
	if s.fixed {
		defer nc.Close()
	}
	if err := nc.Publish("orders", []byte(strconv.Itoa(id))); err != nil {
		return err
	}
	return nc.Flush()
}

func (s *service) call(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	if err := s.publish(id); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	fmt.Fprintln(w, "ok")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	withPprof := flag.Bool("pprof", true, "serve net/http/pprof")
	fixed := flag.Bool("fixed", false, "close each connection when done")
	backend := flag.String("backend", "", "serve NATS on this address (the child)")
	flag.Parse()
	if *backend != "" {
		serveNATS(*backend)
		return
	}
	url, err := startBackend()
	if err != nil {
		log.Fatal(err)
	}
	s := &service{url: url, fixed: *fixed}
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

func serveNATS(addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	ns, err := server.NewServer(&server.Options{Host: host, Port: p, NoSigs: true, MaxConn: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	ns.Start()
	ns.WaitForShutdown()
}

// startBackend starts this binary as the NATS server, in this process's group, and waits
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
			return "nats://" + addr, nil
		}
	}
	return "", fmt.Errorf("the NATS server on %s did not start", addr)
}
