package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strings"
	"testing"
)

// TestProbe reads this test process through a real net/http/pprof handler and /proc.
func TestProbe(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := probe(context.Background(), srv.URL+"/debug/pprof/", os.Getpid())
	if r.Goroutines < 2 || r.HeapAlloc == 0 || r.RSS == 0 || r.HWM < r.RSS {
		t.Errorf("probe = %+v; want goroutines, heap and RSS read", r)
	}
	// Nothing answers: zeros, not an error the runner must handle.
	if r := probe(context.Background(), "http://127.0.0.1:1/debug/pprof/", -1); r != (reading{}) {
		t.Errorf("probe of nothing = %+v", r)
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tcoredns\nVmPeak:\t 2000000 kB\nVmHWM:\t  378800 kB\nVmRSS:\t   29696 kB\nThreads:\t9\n"
	rss, hwm := parseStatus(strings.NewReader(status))
	if rss != 29696<<10 || hwm != 378800<<10 {
		t.Errorf("parseStatus = %d, %d", rss, hwm)
	}
}

func TestScanFor(t *testing.T) {
	body := "goroutine profile: total 1815\n1790 @ 0x1 0x2\n"
	if line, err := scanFor(strings.NewReader(body), "goroutine profile: total "); err != nil || line != "goroutine profile: total 1815" {
		t.Errorf("scanFor = %q, %v", line, err)
	}
	if _, err := scanFor(strings.NewReader(body), "# HeapAlloc = "); err == nil {
		t.Error("scanFor found a line that is not there")
	}
}
