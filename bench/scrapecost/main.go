//go:build linux

// Command scrapecost measures what each of memdoctor's requests costs the target: the CPU
// time the target spends per request (its threads' run time from /proc, less its idle CPU
// over the same time), what it allocates per request and the longest stop-the-world pause the requests
// caused (from the target's own runtime/metrics, which it prints on SIGUSR1), and the
// request's wall time, for the pprof index page (read every sample), the goroutine profile,
// its text, the heap profile and heap?debug=1 (every snapshot) and the goroutineleak profile
// (sparingly).
//
//	go run ./bench/scrapecost -target BIN [-n 500] -- [target flags...]
//
// bench/scrapecost/run.sh builds the target with Go 1.27 and runs a few sizes;
// bench/scrapecost/watchcost.sh measures a whole watch against an unwatched twin.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// report is the part of the target's SIGUSR1 report used here (bench/scrapecost/target).
type report struct {
	AllocBytes       uint64
	GCAuto, GCForced uint64
	PausesTotalOther [][2]float64
	PausesTotalGC    [][2]float64
}

func main() {
	target := flag.String("target", "", "the target binary (bench/scrapecost/target)")
	n := flag.Int("n", 500, "requests per endpoint (the index gets 10n, heap n/5, the goroutineleak profile n/10)")
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
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	check(err)
	reports := make(chan report, 1)
	go func() {
		for {
			b, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var r report
			if json.Unmarshal(b, &r) == nil {
				reports <- r
			}
		}
	}()
	ask := func() report {
		check(cmd.Process.Signal(syscall.SIGUSR1))
		select {
		case r := <-reports:
			return r
		case <-time.After(10 * time.Second):
			check(fmt.Errorf("the target did not report"))
		}
		return report{}
	}
	base := "http://" + strings.TrimSpace(line) + "/debug/pprof/"
	pid := cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)

	fmt.Printf("target %s\n", strings.Join(flag.Args(), " "))
	fmt.Printf("%-22s %8s %14s %14s %12s %12s %12s %10s\n", "endpoint", "requests", "target CPU/req", "allocated/req", "longest STW", "GC cycles", "wall p50", "wall max")
	for _, ep := range []struct {
		name, path string
		n          int
	}{
		{"index", "", *n * 10},
		{"cmdline", "cmdline", *n * 10},
		{"goroutine (proto)", "goroutine", *n},
		{"goroutine?debug=1", "goroutine?debug=1", *n},
		{"heap (proto)", "heap", *n / 5},
		{"heap?debug=1", "heap?debug=1", *n / 5},
		{"goroutineleak", "goroutineleak", max(*n/10, 5)},
	} {
		idle := idleCPU(pid, time.Second)
		r0 := ask()
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
		r1 := ask()
		slices.Sort(walls)
		longest := math.Max(longestNew(r0.PausesTotalOther, r1.PausesTotalOther), longestNew(r0.PausesTotalGC, r1.PausesTotalGC))
		fmt.Printf("%-22s %8d %14s %11.1f KiB %12s %12d %12s %10s\n", ep.name, ep.n,
			time.Duration(used/float64(ep.n)*float64(time.Second)).Round(time.Microsecond),
			float64(r1.AllocBytes-r0.AllocBytes)/float64(ep.n)/1024,
			time.Duration(longest*float64(time.Second)).Round(time.Microsecond),
			r1.GCAuto+r1.GCForced-r0.GCAuto-r0.GCForced,
			walls[len(walls)/2].Round(time.Microsecond), walls[len(walls)-1].Round(time.Microsecond))
	}
}

// longestNew is the upper bound of the highest bucket of a cumulative pause histogram that
// gained counts between a and b, in seconds.
func longestNew(a, b [][2]float64) float64 {
	before := map[float64]float64{}
	for _, p := range a {
		before[p[0]] = p[1]
	}
	longest := 0.0
	for _, p := range b {
		if p[1] > before[p[0]] {
			longest = math.Max(longest, p[0])
		}
	}
	return longest
}

// idleCPU is the target's CPU seconds per second with no request.
func idleCPU(pid int, d time.Duration) float64 {
	c0 := cpu(pid)
	time.Sleep(d)
	return (cpu(pid) - c0) / d.Seconds()
}

// cpu is how long the target's threads have run, in seconds (/proc/PID/task/*/schedstat: to
// the nanosecond, where /proc/PID/stat counts 10 ms ticks).
func cpu(pid int) float64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	check(err)
	var ns int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just ended
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			n, _ := strconv.ParseInt(fs[0], 10, 64)
			ns += n
		}
	}
	return float64(ns) / 1e9
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
