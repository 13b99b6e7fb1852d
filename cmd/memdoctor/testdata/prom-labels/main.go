// Command prom-labels is a web server instrumented with the Prometheus client library
// (github.com/prometheus/client_golang, through the module proxy) as many services are: an HTTP
// middleware makes a counter and a histogram vector with promauto, so registered in the default
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

// instrument counts each request under its path, and times it, the way HTTP middlewares on
// client_golang do: its vectors are made with promauto (registered in the default registry)
// and kept only by the handler it returns (and by the registry).
func instrument(next http.HandlerFunc) http.HandlerFunc {
	requests := promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "http_requests_total",
		Help: "Requests served, by path and method.",
	}, []string{"path", "method"})
	latency := promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Time to serve a request, by path.",
		Buckets: prometheus.DefBuckets,
	}, []string{"path"})
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next(w, r)
		// The leak: a series per path ever requested.
		requests.WithLabelValues(r.URL.Path, r.Method).Inc()
		latency.WithLabelValues(r.URL.Path).Observe(time.Since(start).Seconds())
	}
}

// serve answers every path.
func serve(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "ok %s\n", r.URL.Path)
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
	mux.HandleFunc("/", instrument(serve))
	if err := http.Serve(l, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
