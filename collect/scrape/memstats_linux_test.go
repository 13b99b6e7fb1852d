package scrape

import (
	"syscall"
	"testing"
)

// checkMaxRSS brackets the MaxRSS that this process prints (getrusage
// ru_maxrss, in KiB on Linux) between readings taken around a scrape.
func checkMaxRSS(t *testing.T, c *Client) {
	t.Helper()
	before := maxRSS(t)
	ms, err := c.MemStats(testContext(t))
	after := maxRSS(t)
	if err != nil {
		t.Fatalf("MemStats: %v", err)
	}
	if ms.MaxRSS == 0 || ms.MaxRSS < before || ms.MaxRSS > after {
		t.Errorf("MaxRSS = %d, getrusage says %d before and %d after", ms.MaxRSS, before, after)
	}
}

func maxRSS(t *testing.T) uint64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return uint64(ru.Maxrss) * 1024
}
