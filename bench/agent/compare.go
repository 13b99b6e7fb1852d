package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// run is one measured run of one configuration.
type run struct {
	load   loadResult
	server serverStats
}

func compare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	runs := fs.Int("runs", 4, "runs per configuration")
	requests := fs.Int("requests", 250000, "requests per run (about 30s each on 2 cores: two 15s profiling cycles of each tool)")
	warmup := fs.Int("warmup", 10000, "requests before each measured run (fill the service's store)")
	conc := fs.Int("concurrency", 8, "concurrent clients")
	configs := fs.String("configs", "none,memdoctor,pyroscope,holmes", "configurations, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.Close()
	dumps, err := os.MkdirTemp("", "bench-agent-holmes")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dumps)

	names := strings.Split(*configs, ",")
	results := make(map[string][]run)
	orders := bodies()
	start := time.Now()
	for i := range *runs {
		for j := range names {
			name := names[(i+j)%len(names)] // rotate the order from round to round
			r, err := oneRun(self, name, "http://"+sink.Addr().String(), dumps, *requests, *warmup, *conc, orders)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", name, i+1, err)
			}
			results[name] = append(results[name], r)
			fmt.Fprintf(os.Stderr, "run %d/%d %-9s %8.0f req/s  p50 %6.2fms  p99 %6.2fms  cpu %6.2fs  peak RSS %6.1f MB\n",
				i+1, *runs, name, r.load.throughput(), ms(r.load.P50), ms(r.load.P99), r.server.CPUSeconds, float64(r.server.PeakRSSBytes)/1e6)
		}
	}
	fmt.Fprintf(os.Stderr, "%d runs of %d requests each, %d clients, in %s\n", (*runs)*len(names), *requests, *conc, time.Since(start).Round(time.Second))
	printTable(os.Stdout, names, results, *runs, *requests, *conc)
	return nil
}

// oneRun starts a service with one configuration, warms it up, measures a run, stops it and
// reads what it reports about itself.
func oneRun(self, config, sinkURL, dumps string, n, warmup, c int, orders [][]byte) (run, error) {
	cmd := exec.Command(self, "serve", "-config", config, "-sink", sinkURL, "-dumps", dumps)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return run{}, err
	}
	if err := cmd.Start(); err != nil {
		return run{}, err
	}
	defer cmd.Process.Kill()
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		return run{}, fmt.Errorf("the service did not start: %w", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		return run{}, fmt.Errorf("unexpected first line %q", line)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}, Timeout: 30 * time.Second}
	url := "http://" + addr + "/order"
	if warmup > 0 {
		if w := load(client, url, warmup, c, orders); w.Errors > 0 {
			return run{}, fmt.Errorf("%d errors in the warm-up", w.Errors)
		}
	}
	lr := load(client, url, n, c, orders)
	if lr.Errors > 0 {
		return run{}, fmt.Errorf("%d of %d requests failed", lr.Errors, n)
	}
	client.CloseIdleConnections()
	cmd.Process.Signal(syscall.SIGTERM)
	var st serverStats
	if err := json.NewDecoder(br).Decode(&st); err != nil {
		return run{}, fmt.Errorf("the service's closing report: %w", err)
	}
	io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		return run{}, fmt.Errorf("the service: %w", err)
	}
	return run{load: lr, server: st}, nil
}

// startSink serves a loopback endpoint that accepts pyroscope's pushes and discards them.
func startSink() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	return ln, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
