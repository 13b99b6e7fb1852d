// Command prom-labels is a web server instrumented with the Prometheus client library
// (github.com/prometheus/client_golang, through the module proxy) as many services are: a
// counter and a histogram vector, made with promauto and so registered in the default
// registry, labelled by the request's path. Every path ever requested keeps its series in each
// vector for ever (client_golang deletes a series only when asked to): a service whose paths
// carry ids grows without bound.
//
// It listens on 127.0.0.1 (port 0 unless -addr says), prints the address on its first line,
// and serves every path (the metrics at /metrics). The memdoctor tests drive it and read its
// holders.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

var (
	requests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "http_requests_total",
		Help: "Requests served, by path and method.",
	}, []string{"path", "method"})
	latency = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Time to serve a request, by path.",
		Buckets: prometheus.DefBuckets,
	}, []string{"path"})
)

// serve answers every path, and counts it under its own path: the leak.
func serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	fmt.Fprintf(w, "ok %s\n", r.URL.Path)
	requests.WithLabelValues(r.URL.Path, r.Method).Inc()
	latency.WithLabelValues(r.URL.Path).Observe(time.Since(start).Seconds())
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	// The heap profile's sampling rate: the default (512 KiB) samples a few of the series a few
	// thousand requests leave; the tests want enough of them to judge.
	rate := flag.Int("memprofilerate", 4096, "runtime.MemProfileRate")
	flag.Parse()
	runtime.MemProfileRate = *rate
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(l.Addr())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/", serve)
	if err := http.Serve(l, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
