//go:build !nopprof

package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the scenario and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var (
	servingLine = regexp.MustCompile(`(?m)^lab: ([a-z0-9-]+) serving pprof on (http://127\.0\.0\.1:[0-9]+/debug/pprof/)\n`)
	stoppedLine = regexp.MustCompile(`(?m)^lab: ([a-z0-9-]+) stopped after [0-9.]+(ms|s|m[0-9.]*s): ([0-9]+) requests, ([0-9]+) gc cycles\n`)
)

// running is a scenario started by startScenario.
type running struct {
	t      *testing.T
	name   string
	out    *syncBuffer
	url    string // the pprof index
	cancel context.CancelFunc
	done   chan error
	before map[int]bool // goroutines that existed before the scenario
}

// startScenario runs the named scenario and waits until it serves.
func startScenario(t *testing.T, name string) *running {
	t.Helper()
	s, ok := Lookup(name)
	if !ok {
		t.Fatalf("no scenario %q", name)
	}
	r := &running{t: t, name: name, out: &syncBuffer{}, done: make(chan error, 1), before: goroutineIDs()}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- s.Run(ctx, Env{Stdout: r.out}) }()
	// A hang detector, not a measure: subscriber-flood's 100,000 goroutines take a CPU-second
	// before it serves, which a CI run at load 12-17 on two cores stretched past 20 s.
	deadline := time.Now().Add(time.Minute)
	for {
		if m := servingLine.FindStringSubmatch(r.out.String()); m != nil {
			if m[1] != name {
				t.Fatalf("serving line names %q, want %q", m[1], name)
			}
			r.url = m[2]
			return r
		}
		select {
		case err := <-r.done:
			cancel()
			t.Fatalf("%s: Run returned before serving: %v (output %q)", name, err, r.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("%s: no serving line after a minute; output %q", name, r.out.String())
		}
	}
}

// stop cancels the scenario, waits for Run to return, checks its output and
// returns the number of requests it reported.
func (r *running) stop() int {
	t := r.t
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("%s: Run: %v", r.name, err)
		}
	case <-time.After(30 * time.Second): // a hang detector, not a timing assertion
		t.Fatalf("%s: Run did not return 30s after its context was cancelled", r.name)
	}
	out := r.out.String()
	if n := len(servingLine.FindAllString(out, -1)); n != 1 {
		t.Errorf("%s: %d serving lines in %q, want 1", r.name, n, out)
	}
	m := stoppedLine.FindAllStringSubmatch(out, -1)
	if len(m) != 1 || m[0][1] != r.name {
		t.Fatalf("%s: want one stopped line naming the scenario, got output %q", r.name, out)
	}
	if !strings.HasSuffix(out, m[0][0]) {
		t.Errorf("%s: output after the stopped line: %q", r.name, out)
	}
	requests, _ := strconv.Atoi(m[0][3])
	return requests
}

// checkNoGoroutinesLeft fails if goroutines started while the scenario ran
// are still running; it gives them a few seconds to finish.
func (r *running) checkNoGoroutinesLeft() {
	t := r.t
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		left = left[:0]
		for id, stack := range goroutineStacks() {
			if !r.before[id] && !strings.Contains(stack, "lab.(*running).checkNoGoroutinesLeft") {
				left = append(left, stack)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("%s: %d goroutines still running after Run returned; the first:\n%s", r.name, len(left), left[0])
	}
}

var goroutineHeader = regexp.MustCompile(`^goroutine ([0-9]+) `)

// goroutineStacks returns the stack of every goroutine (runtime.Stack skips
// the runtime's own), by goroutine ID.
func goroutineStacks() map[int]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := map[int]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if m := goroutineHeader.FindStringSubmatch(g); m != nil {
			id, _ := strconv.Atoi(m[1])
			stacks[id] = g
		}
	}
	return stacks
}

func goroutineIDs() map[int]bool {
	ids := map[int]bool{}
	for id := range goroutineStacks() {
		ids[id] = true
	}
	return ids
}

func httpGet(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if len(body) == 0 {
		t.Fatalf("GET %s: empty body", url)
	}
}

// TestScenariosStartServeStop runs every scenario for about two seconds (longer where its
// culprit's allocations are not sampled enough by then: awaitSamples): it must serve pprof,
// make requests, show its culprit in the profile, stop cleanly and leave nothing running.
// With -short, a second each and no culprit (a slow leak may not be sampled in a second):
// the full run checks them.
func TestScenariosStartServeStop(t *testing.T) {
	run := 2 * time.Second
	if testing.Short() {
		run = time.Second
	}
	for _, s := range checked() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "non-go-mmap" && runtime.GOOS != "linux" {
				t.Skip("the off-heap cache maps memory on Linux only")
			}
			if s.Name == "subscriber-flood" && testing.Short() {
				t.Skip("starts 100,000 goroutines (10 s on two cores): the full run checks it")
			}
			http.DefaultClient.CloseIdleConnections()
			r := startScenario(t, s.Name)
			httpGet(t, r.url)
			httpGet(t, r.url+"heap?debug=1")
			http.DefaultClient.CloseIdleConnections()
			// The window starts after the test's own requests: serving heap?debug=1 allocates
			// more than a slow scenario does in two seconds on a busy machine (CI: cost-climb's
			// 42 requests ranked below runtime/pprof.printStackRecord).
			profile := memProfile()
			time.Sleep(run)
			if !testing.Short() {
				checkCulprit(t, s, profile, memProfile)
			}
			t0 := time.Now()
			n := r.stop()
			t.Logf("%d requests; stopped in %v", n, time.Since(t0).Round(time.Millisecond))
			if n == 0 {
				t.Errorf("%s: its load made no requests", s.Name)
			}
			t0 = time.Now()
			r.checkNoGoroutinesLeft()
			t.Logf("goroutines gone %v later", time.Since(t0).Round(time.Millisecond))
		})
	}
}

func readMetric(name string) float64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	switch s[0].Value.Kind() {
	case metrics.KindUint64:
		return float64(s[0].Value.Uint64())
	case metrics.KindFloat64:
		return s[0].Value.Float64()
	}
	panic(fmt.Sprintf("metric %s not supported", name))
}

// liveHeapAfterGC forces a collection and reads /gc/heap/live.
func liveHeapAfterGC() float64 {
	runtime.GC()
	return readMetric("/gc/heap/live:bytes")
}

// mechanism runs a scenario for about five seconds and returns a metric read
// by measure a second after the start and at the end.
func mechanism(t *testing.T, name string, measure func() float64) (first, last float64) {
	if testing.Short() {
		t.Skip("runs a scenario for 5s")
	}
	r := startScenario(t, name)
	defer r.checkNoGoroutinesLeft()
	defer r.stop()
	time.Sleep(time.Second)
	first = measure()
	time.Sleep(4 * time.Second)
	last = measure()
	return first, last
}

const mib = 1 << 20

func TestTCPReassemblyHeapGrows(t *testing.T) {
	first, last := mechanism(t, "tcp-reassembly", liveHeapAfterGC)
	t.Logf("live heap %.1f MiB -> %.1f MiB in 4s", first/mib, last/mib)
	if last-first < 2*mib { // about 14 MiB expected
		t.Errorf("live heap grew by %.1f MiB in 4s; the reassembly buffers should grow it by megabytes a second", (last-first)/mib)
	}
}

// The pattern cache keeps about 0.7 MB a second inside package regexp's structures.
func TestPatternCacheLeakGrows(t *testing.T) {
	first, last := mechanism(t, "pattern-cache-leak", liveHeapAfterGC)
	t.Logf("live heap %.1f MiB -> %.1f MiB in 4s", first/mib, last/mib)
	if last-first < 1*mib { // about 2.8 MiB expected
		t.Errorf("live heap grew by %.1f MiB in 4s; the pattern cache should grow it by about 0.7 MB a second", (last-first)/mib)
	}
}

func TestGoroutineLeakGrows(t *testing.T) {
	first, last := mechanism(t, "goroutine-leak", func() float64 { return readMetric("/sched/goroutines:goroutines") })
	t.Logf("goroutines %.0f -> %.0f in 4s", first, last)
	if last-first < 20 { // about 120 expected
		t.Errorf("goroutines grew by %.0f in 4s; the fan-out should leak tens a second", last-first)
	}
}

func TestHealthyStaysFlat(t *testing.T) {
	var heap [2]float64
	i := 0
	first, last := mechanism(t, "healthy", func() float64 {
		heap[i] = liveHeapAfterGC()
		i++
		return readMetric("/sched/goroutines:goroutines")
	})
	t.Logf("live heap %.1f MiB -> %.1f MiB, goroutines %.0f -> %.0f in 4s", heap[0]/mib, heap[1]/mib, first, last)
	if heap[1]-heap[0] > 2*mib {
		t.Errorf("live heap grew by %.1f MiB in 4s", (heap[1]-heap[0])/mib)
	}
	if last-first > 10 {
		t.Errorf("goroutines grew by %.0f in 4s", last-first)
	}
}
