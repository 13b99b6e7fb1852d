// Command grpc is a service whose handler makes a gRPC channel with grpc.NewClient for every
// request and, unless -fixed, never closes it: each channel keeps its resolver's, balancer's
// and transport's goroutines. Its gRPC server (the standard health service) is the same
// binary, started as a child (-backend).
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

type service struct {
	target string
	fixed  bool
}

// check asks the inventory service whether it serves.
func (s *service) check(ctx context.Context) (string, error) {
	conn, err := grpc.NewClient(s.target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	if s.fixed {
		defer conn.Close()
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "inventory"})
	if err != nil {
		return "", err
	}
	return resp.GetStatus().String(), nil
}

func (s *service) call(w http.ResponseWriter, r *http.Request) {
	st, err := s.check(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	fmt.Fprintln(w, st)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	withPprof := flag.Bool("pprof", true, "serve net/http/pprof")
	fixed := flag.Bool("fixed", false, "close each channel when done")
	backend := flag.String("backend", "", "serve gRPC health on this address (the child)")
	flag.Parse()
	if *backend != "" {
		serveGRPC(*backend)
		return
	}
	target, err := startBackend()
	if err != nil {
		log.Fatal(err)
	}
	s := &service{target: target, fixed: *fixed}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /call/{id}", s.call)
	if *withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready", ln.Addr(), strconv.Quote(target))
	log.Fatal(http.Serve(ln, mux))
}

func serveGRPC(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("inventory", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	log.Fatal(srv.Serve(ln))
}

// startBackend starts this binary as the gRPC server, in this process's group, and waits
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
			return "passthrough:///" + addr, nil
		}
	}
	return "", fmt.Errorf("the gRPC server on %s did not start", addr)
}
