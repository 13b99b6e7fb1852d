package main

import (
	"context"
	"io"
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
	r := probe(context.Background(), srv.URL+"/debug/pprof/", os.Getpid(), false)
	if r.Goroutines < 2 || r.HeapAlloc == 0 || r.RSS == 0 || r.HWM < r.RSS || r.LeakServed {
		t.Errorf("probe = %+v; want goroutines, heap and RSS read", r)
	}
	// Nothing answers: zeros, not an error the runner must handle.
	if r := probe(context.Background(), "http://127.0.0.1:1/debug/pprof/", -1, true); r != (reading{}) {
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

// TestProbeGoroutineLeak reads the count of a goroutineleak profile, served here by a stand-in
// with the format's first line; a server without the profile leaves LeakServed false.
func TestProbeGoroutineLeak(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/goroutineleak", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "goroutineleak profile: total 287\n201 @ 0x493c8a 0x41dd1c\n")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if r := probe(context.Background(), srv.URL+"/debug/pprof/", os.Getpid(), true); !r.LeakServed || r.ProvenLeaked != 287 {
		t.Errorf("probe = %+v; want 287 proven leaked", r)
	}
	if r := probe(context.Background(), srv.URL+"/debug/pprof/", os.Getpid(), false); r.LeakServed {
		t.Errorf("probe read the goroutineleak profile unasked: %+v", r)
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	if r := probe(context.Background(), plain.URL+"/debug/pprof/", os.Getpid(), true); r.LeakServed {
		t.Errorf("a 404 counted as a served profile: %+v", r)
	}
}
