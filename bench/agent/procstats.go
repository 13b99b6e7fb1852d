package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverStats is what a service process reports about itself when it stops.
type serverStats struct {
	CPUSeconds   float64 `json:"cpu_seconds"`
	PeakRSSBytes uint64  `json:"peak_rss_bytes"`
}

func selfStats() (serverStats, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return serverStats{}, err
	}
	cpu := time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())
	hwm, err := vmHWM()
	if err != nil {
		return serverStats{}, err
	}
	return serverStats{CPUSeconds: cpu.Seconds(), PeakRSSBytes: hwm}, nil
}

// vmHWM reads the peak resident set size from /proc/self/status.
func vmHWM() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
