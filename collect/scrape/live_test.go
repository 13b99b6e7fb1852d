package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
)

// The tests here scrape the test process itself through the real
// net/http/pprof handlers.

var heapTestSink [][]byte

//go:noinline
func allocateForHeapTest(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, size)
	}
	return out
}

func TestLiveHeap(t *testing.T) {
	srv := newPprofServer(t, "")
	c := newClient(t, srv.URL)

	// 64 MiB in 1 MiB objects: at the default 512 KiB sampling rate each is
	// sampled with probability 1-e^-2, so the estimate is about 64 MiB.
	heapTestSink = allocateForHeapTest(64, 1<<20)
	defer func() { heapTestSink = nil }()
	// The heap profile is as of the last completed GC and can lag by two
	// cycles. The test process, not memdoctor, runs them.
	runtime.GC()
	runtime.GC()

	raw, p, err := c.Heap(testContext(t))
	if err != nil {
		t.Fatalf("Heap: %v", err)
	}
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("raw heap profile does not start with the gzip magic: % x", raw[:min(len(raw), 8)])
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	want := []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}
	if !slices.Equal(types, want) {
		t.Errorf("sample types = %v, want %v", types, want)
	}
	if p.PeriodType == nil || p.PeriodType.Type != "space" || p.Period != int64(runtime.MemProfileRate) {
		t.Errorf("period = %v %d, want space %d", p.PeriodType, p.Period, runtime.MemProfileRate)
	}
	again, err := profile.ParseData(raw)
	if err != nil || len(again.Sample) != len(p.Sample) {
		t.Errorf("the raw bytes do not reparse to the same profile: %v", err)
	}
	inuse := sumWhere(p, 3, "allocateForHeapTest")
	if inuse < 32<<20 || inuse > 128<<20 {
		t.Errorf("inuse_space attributed to allocateForHeapTest = %d bytes, want about 64 MiB", inuse)
	}
	runtime.KeepAlive(heapTestSink)
}

// sumWhere sums sample value i over the samples whose stack has a function
// whose name contains fn.
func sumWhere(p *profile.Profile, i int, fn string) int64 {
	var sum int64
	for _, s := range p.Sample {
		if stackHas(s, fn) {
			sum += s.Value[i]
		}
	}
	return sum
}

func stackHas(s *profile.Sample, fn string) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && strings.Contains(l.Function.Name, fn) {
				return true
			}
		}
	}
	return false
}

//go:noinline
func parkForGoroutineTest(started *sync.WaitGroup, release <-chan struct{}) {
	started.Done()
	<-release
}

// parkGoroutines starts n goroutines blocked in parkForGoroutineTest until
// the test ends.
func parkGoroutines(t *testing.T, n int) {
	var started, done sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			parkForGoroutineTest(&started, release)
		}()
	}
	started.Wait()
	t.Cleanup(func() {
		close(release)
		done.Wait()
	})
}

func TestLiveGoroutine(t *testing.T) {
	const parked = 7
	parkGoroutines(t, parked)
	c := newClient(t, newPprofServer(t, "").URL)

	raw, p, err := c.Goroutine(testContext(t))
	if err != nil {
		t.Fatalf("Goroutine: %v", err)
	}
	if len(raw) == 0 || len(p.SampleType) != 1 || p.SampleType[0].Type != "goroutine" {
		t.Fatalf("sample types = %v, want [goroutine/count]", p.SampleType)
	}
	if n := sumWhere(p, 0, "parkForGoroutineTest"); n != parked {
		t.Errorf("goroutines in parkForGoroutineTest = %d, want %d", n, parked)
	}
}

func TestLiveGoroutineText(t *testing.T) {
	const parked = 5
	parkGoroutines(t, parked)
	c := newClient(t, newPprofServer(t, "").URL)

	body, err := c.GoroutineText(testContext(t))
	if err != nil {
		t.Fatalf("GoroutineText: %v", err)
	}
	text := body.Bytes()
	if !bytes.HasPrefix(text, []byte("goroutine profile: total ")) {
		t.Fatalf("text starts %q", text[:min(len(text), 40)])
	}
	if n := countInTextRecords(t, text, "parkForGoroutineTest"); n != parked {
		t.Errorf("goroutines in parkForGoroutineTest = %d, want %d", n, parked)
	}
}

// countInTextRecords sums the counts of the debug=1 records that mention
// fn. A record is "N @ pc pc ..." then "#\tpc\tfunc+off\tfile:line" lines;
// records are separated by blank lines, after a "goroutine profile: total
// N" line.
func countInTextRecords(t *testing.T, text []byte, fn string) int {
	t.Helper()
	total := 0
	for _, rec := range strings.Split(string(text), "\n\n") {
		if strings.HasPrefix(rec, "goroutine profile:") {
			_, rec, _ = strings.Cut(rec, "\n")
		}
		head, _, _ := strings.Cut(rec, "\n")
		nStr, _, ok := strings.Cut(head, " @")
		if !ok || !strings.Contains(rec, fn) {
			continue
		}
		n, err := strconv.Atoi(nStr)
		if err != nil {
			t.Fatalf("record head %q: %v", head, err)
		}
		total += n
	}
	return total
}

func TestLiveCustomPrefix(t *testing.T) {
	srv := newPprofServer(t, "/custom/prefix")
	for _, base := range []string{
		srv.URL + "/custom/prefix",
		srv.URL + "/custom/prefix/debug/pprof",
		srv.URL + "/custom/prefix/debug/pprof/",
	} {
		t.Run(base, func(t *testing.T) {
			c := newClient(t, base)
			if want := srv.URL + "/custom/prefix/debug/pprof/"; c.BaseURL() != want {
				t.Errorf("BaseURL() = %q, want %q", c.BaseURL(), want)
			}
			ctx := testContext(t)
			if err := c.Probe(ctx); err != nil {
				t.Errorf("Probe: %v", err)
			}
			if _, _, err := c.Heap(ctx); err != nil {
				t.Errorf("Heap: %v", err)
			}
			if ms, err := c.MemStats(ctx); err != nil || ms.Sys == 0 {
				t.Errorf("MemStats: %+v, %v", ms.Sys, err)
			}
		})
	}
}

// A service that mounts pprof under a prefix without http.StripPrefix gets
// the index page for every profile (pprof.Index only knows /debug/pprof/).
func TestPrefixWithoutStripPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/custom/debug/pprof/", pprof.Index)
	srv := newServer(t, mux)
	c := newClient(t, srv.URL+"/custom")
	ctx := testContext(t)
	if err := c.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	_, _, err := c.Heap(ctx)
	if !errors.Is(err, ErrNotProfile) || !strings.Contains(err.Error(), "StripPrefix") {
		t.Fatalf("Heap error = %v, want ErrNotProfile with a StripPrefix hint", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := newClient(t, newPprofServer(t, "").URL)
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				_, _, err = c.Heap(ctx)
			case 1:
				_, err = c.MemStats(ctx)
			default:
				err = c.Probe(ctx)
			}
			if err != nil {
				errs <- fmt.Errorf("call %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
