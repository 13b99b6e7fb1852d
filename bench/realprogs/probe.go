package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// reading is the harness's own view of the program at one moment, independent of memdoctor:
// the ground truth a verdict is judged against.
type reading struct {
	Goroutines int    `json:"goroutines"`       // from /debug/pprof/goroutine?debug=1
	HeapAlloc  uint64 `json:"heap_alloc_bytes"` // MemStats.HeapAlloc from /debug/pprof/heap?debug=1
	RSS        uint64 `json:"rss_bytes"`        // VmRSS
	HWM        uint64 `json:"hwm_bytes"`        // VmHWM, the RSS high-water mark
	// LeakServed says the program serves /debug/pprof/goroutineleak (Go 1.27, or 1.26 with
	// GOEXPERIMENT=goroutineleakprofile); ProvenLeaked is its count: goroutines the GC proved
	// blocked forever. Read after the load only: the profile runs a GC cycle of its own.
	LeakServed   bool `json:"goroutineleak_served,omitempty"`
	ProvenLeaked int  `json:"goroutineleak,omitempty"`
}

// probe reads the goroutine count and heap size from the program's pprof endpoints and its RSS
// from /proc, and with leaks the goroutineleak profile's count. Fields it cannot read stay
// zero.
func probe(ctx context.Context, pprofBase string, pid int, leaks bool) reading {
	var r reading
	client := probeClient(10 * time.Second)
	if line, err := firstLineWith(ctx, client, pprofBase+"goroutine?debug=1", "goroutine profile: total "); err == nil {
		r.Goroutines, _ = strconv.Atoi(strings.TrimPrefix(line, "goroutine profile: total "))
	}
	if line, err := firstLineWith(ctx, client, pprofBase+"heap?debug=1", "# HeapAlloc = "); err == nil {
		r.HeapAlloc, _ = strconv.ParseUint(strings.TrimPrefix(line, "# HeapAlloc = "), 10, 64)
	}
	if leaks {
		if line, err := firstLineWith(ctx, client, pprofBase+"goroutineleak?debug=1", "goroutineleak profile: total "); err == nil {
			r.LeakServed = true
			r.ProvenLeaked, _ = strconv.Atoi(strings.TrimPrefix(line, "goroutineleak profile: total "))
		}
	}
	r.RSS, r.HWM = procMemory(pid)
	return r
}

// probeClient is an HTTP client for the harness's own requests to the program: each on a
// connection of its own, closed after it. A connection kept open for the next request is a
// goroutine serving it in the program, counted in the next reading's goroutines; the program's
// counts are its own and the one serving the reading.
func probeClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
}

// firstLineWith returns the first line of url's body that starts with prefix.
func firstLineWith(ctx context.Context, client *http.Client, url, prefix string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return scanFor(io.LimitReader(resp.Body, 64<<20), prefix)
}

func scanFor(r io.Reader, prefix string) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no line starting with %q", prefix)
}

// procMemory returns VmRSS and VmHWM of pid in bytes, zeros when /proc cannot say.
func procMemory(pid int) (rss, hwm uint64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	return parseStatus(f)
}

func parseStatus(r io.Reader) (rss, hwm uint64) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm
}
