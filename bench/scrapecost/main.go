// Command scrapecost measures what memdoctor's requests cost the target: the CPU time the
// target spends per request (from /proc/PID/stat, less its idle CPU over the same time) and
// the request's wall time, for the pprof index page (read every sample), the goroutine
// profile and heap?debug=1 (every snapshot) and the goroutineleak profile (sparingly).
//
//	go run ./bench/scrapecost -target BIN [-n 500] -- [target flags...]
//
// bench/scrapecost/run.sh builds the target with Go 1.27 and runs a few sizes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

const clockTicks = 100 // USER_HZ on Linux

func main() {
	target := flag.String("target", "", "the target binary (bench/scrapecost/target)")
	n := flag.Int("n", 500, "requests per endpoint (the index gets 10n, heap?debug=1 n/5, the goroutineleak profile n/10)")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "scrapecost: -target BIN is required")
		os.Exit(2)
	}
	cmd := exec.Command(*target, flag.Args()...)
	out, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	check(err)
	base := "http://" + strings.TrimSpace(line) + "/debug/pprof/"
	pid := cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)

	fmt.Printf("target %s\n", strings.Join(flag.Args(), " "))
	fmt.Printf("%-22s %8s %14s %12s %12s\n", "endpoint", "requests", "target CPU/req", "wall p50", "wall max")
	for _, ep := range []struct {
		name, path string
		n          int
	}{
		{"index", "", *n * 10},
		{"goroutine (proto)", "goroutine", *n},
		{"heap?debug=1", "heap?debug=1", *n / 5},
		{"goroutineleak", "goroutineleak", max(*n/10, 5)},
	} {
		idle := idleCPU(pid, time.Second)
		c0 := cpu(pid)
		t0 := time.Now()
		var walls []time.Duration
		for range ep.n {
			s := time.Now()
			get(base + ep.path)
			walls = append(walls, time.Since(s))
		}
		elapsed := time.Since(t0)
		used := cpu(pid) - c0 - idle*elapsed.Seconds()
		slices.Sort(walls)
		fmt.Printf("%-22s %8d %14s %12s %12s\n", ep.name, ep.n,
			time.Duration(used/float64(ep.n)*float64(time.Second)).Round(time.Microsecond),
			walls[len(walls)/2].Round(time.Microsecond), walls[len(walls)-1].Round(time.Microsecond))
	}
}

// idleCPU is the target's CPU seconds per second with no request.
func idleCPU(pid int, d time.Duration) float64 {
	c0 := cpu(pid)
	time.Sleep(d)
	return (cpu(pid) - c0) / d.Seconds()
}

// cpu is the target's user+system CPU seconds.
func cpu(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / clockTicks
}

func get(url string) {
	resp, err := http.Get(url)
	check(err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "scrapecost: %s: %s\n", url, resp.Status)
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "scrapecost:", err)
		os.Exit(1)
	}
}
