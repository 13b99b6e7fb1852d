//go:build !nopprof

package lab

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// This file checks the mechanisms of the scenarios of shapes the first lab
// lacked: a leak under bigger spikes, a cache warm-up that plateaus, an HTTP
// client leaking through unclosed bodies, goroutines blocked on a channel
// nobody can reach, and a slow leak.

// retainedPer measures the live heap kept by n calls of add, per call.
func retainedPer(n int, add func(i int)) float64 {
	before := liveHeapAfterGC()
	for i := range n {
		add(i)
	}
	return (liveHeapAfterGC() - before) / float64(n)
}

func TestDeviceSessionsLeakPerHello(t *testing.T) {
	d := newDeviceSessions()
	per := retainedPer(500, func(i int) { d.open("dev-" + strconv.Itoa(i)) })
	t.Logf("%.0f bytes kept per new device; %.2f MiB/s at %d hellos/s", per, per*deviceHellos/mib, deviceHellos)
	if per < 0.9*deviceRingBytes || per > 1.25*deviceRingBytes {
		t.Errorf("a new device keeps %.0f bytes, want about %d", per, deviceRingBytes)
	}
	// A device saying hello again keeps nothing more: the leak is in the
	// sessions nobody drops, not in repeated greetings.
	again := retainedPer(500, func(i int) { d.open("dev-" + strconv.Itoa(i)) })
	if again > 512 {
		t.Errorf("a repeated hello keeps %.0f bytes", again)
	}
	runtime.KeepAlive(d)
}

func TestReadingsUploadInflatesWhole(t *testing.T) {
	const n = 24 << 20
	body, err := gzipRepeated(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > n/50 {
		t.Errorf("the %d-byte upload compresses to %d bytes; the load must send far less than the server inflates", n, len(body))
	}
	imp := &readingsImport{}
	req := httptest.NewRequest(http.MethodPost, "/readings", bytes.NewReader(body))
	req.Header.Set("X-Uncompressed-Length", strconv.Itoa(n))
	req.Header.Set("Content-Encoding", "gzip")
	rec := httptest.NewRecorder()
	alloc0 := readMetric("/gc/heap/allocs:bytes")
	imp.handleUpload(rec, req)
	allocated := readMetric("/gc/heap/allocs:bytes") - alloc0
	if rec.Code != http.StatusOK {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	rows, _ := strconv.Atoi(rec.Body.String())
	t.Logf("%d rows; %.1f MiB allocated for a %.1f MiB upload (%d bytes compressed)", rows, allocated/mib, float64(n)/mib, len(body))
	if rows < n/64 {
		t.Errorf("parsed %d rows from %d bytes of CSV", rows, n)
	}
	if allocated < n {
		t.Errorf("handling the upload allocated %.1f MiB, want at least the %.1f MiB inflated whole", allocated/mib, float64(n)/mib)
	}
}

// TestLeakUnderSpikesHeapGrows: the session table grows the live heap. What the sessions keep
// is read from the heap profile (the bytes (*deviceSessions).open left in use), not from the
// whole live heap: the first 150 MB upload starts with the scenario, and on a busy machine it
// is still being inflated a second later, its buffer then most of the live heap.
func TestLeakUnderSpikesHeapGrows(t *testing.T) {
	first, last := mechanism(t, "leak-under-spikes", inUseBy(funcName((*deviceSessions).open)))
	t.Logf("sessions keep %.1f MiB -> %.1f MiB in 4s", first/mib, last/mib)
	if last-first < 5*mib { // about 10 MiB expected
		t.Errorf("the sessions' live heap grew by %.1f MiB in 4s; the session table should grow it by about 2.5 MiB a second", (last-first)/mib)
	}
}

// inUseBy returns a measure of the bytes in use that fn allocated (the innermost frame of the
// module's own code), as of a fresh GC, sampling undone.
func inUseBy(fn string) func() float64 {
	return func() float64 {
		var n int64
		for _, r := range memProfile() {
			if culpritOf(r.Stack()) == fn {
				n += scaled(r.InUseBytes(), r.InUseObjects())
			}
		}
		return float64(n)
	}
}

func TestPageCacheBoundedLRU(t *testing.T) {
	c := newPageCache(10 * pageBytes)
	for i := range 30 {
		id := strconv.Itoa(i)
		c.put(id, renderProductPage(id))
		c.get("0") // page 0 stays the most recently used
	}
	if len(c.byID) != 10 || c.order.Len() != 10 || c.bytes != 10*pageBytes {
		t.Errorf("after 30 pages: %d indexed, %d listed, %d bytes; want 10, 10, %d", len(c.byID), c.order.Len(), c.bytes, 10*pageBytes)
	}
	if c.get("0") == nil {
		t.Error("the most recently used page was evicted")
	}
	if c.get("1") != nil {
		t.Error("an old page was kept past capacity")
	}
	if c.get("29") == nil {
		t.Error("the newest page is missing")
	}
}

// TestCacheWarmupCurve replays the scenario's traffic (the same key
// sequence) against the cache, counting requests for time: the cache must
// be well on its way at 20 s, full by 40 s, and flat after.
func TestCacheWarmupCurve(t *testing.T) {
	c := newPageCache(pageCacheCap)
	rngs := []*rand.Rand{rand.New(rand.NewPCG(pageCacheSeed, 0)), rand.New(rand.NewPCG(pageCacheSeed, 1))}
	page := make([]byte, 0, pageBytes) // shared: the curve only counts bytes
	filled := map[int]int{}            // second -> cache bytes
	for n := range 60 * pageRequests {
		id := strconv.Itoa(rngs[n%2].IntN(catalogPages))
		if c.get(id) == nil {
			c.put(id, page)
		}
		if (n+1)%pageRequests == 0 {
			filled[(n+1)/pageRequests] = c.bytes
		}
	}
	frac := func(s int) float64 { return float64(filled[s]) / pageCacheCap }
	t.Logf("cache fill: 10s %.0f%%, 20s %.0f%%, 30s %.0f%%, 40s %.0f%%, 60s %.0f%%", 100*frac(10), 100*frac(20), 100*frac(30), 100*frac(40), 100*frac(60))
	if frac(20) < 0.5 || frac(20) > 0.95 {
		t.Errorf("cache %.0f%% full at 20s; the warm-up should take 20-40 s", 100*frac(20))
	}
	if frac(40) < 0.99 {
		t.Errorf("cache %.0f%% full at 40s; it should have plateaued", 100*frac(40))
	}
	for s := 40; s <= 60; s++ {
		if filled[s] > pageCacheCap {
			t.Errorf("cache holds %d bytes at %ds, over its %d capacity", filled[s], s, pageCacheCap)
		}
	}
}

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	n := 0
	for _, stack := range goroutineStacks() {
		if strings.Contains(stack, fn+"(") {
			n++
		}
	}
	return n
}

func TestHTTPClientLeakBlocksCallers(t *testing.T) {
	const culprit = "github.com/memdoctor/memdoctor/lab.(*quoteClient).fetchQuote"
	var readLoops int
	first, last := mechanism(t, "http-client-leak", func() float64 {
		readLoops = goroutinesIn("net/http.(*persistConn).readLoop")
		return float64(goroutinesIn(culprit))
	})
	t.Logf("goroutines in fetchQuote %.0f -> %.0f in 4s; %d transport read loops", first, last, readLoops)
	if last-first < 40 { // about 150 expected
		t.Errorf("goroutines blocked in fetchQuote grew by %.0f in 4s; the exhausted pool should block about 40 a second", last-first)
	}
}

func TestHTTPBodyLeakPilesUpNetHTTPGoroutines(t *testing.T) {
	var inCheck int
	first, last := mechanism(t, "http-body-leak", func() float64 {
		inCheck = goroutinesIn("github.com/memdoctor/memdoctor/lab.(*stockClient).checkStock")
		return float64(goroutinesIn("net/http.(*persistConn).readLoop"))
	})
	t.Logf("transport read loops %.0f -> %.0f in 4s; %d goroutines in checkStock", first, last, inCheck)
	if last-first < 20 { // about 40 expected: one connection per unclosed body, 10 a second
		t.Errorf("read loops grew by %.0f in 4s; each unclosed body should pin one, about 10 a second", last-first)
	}
	if inCheck > 16 { // the handlers return: only the calls in flight are there
		t.Errorf("%d goroutines wait in checkStock: the leak should be net/http's goroutines alone", inCheck)
	}
}

func TestGoroutineUnreachableLeaks(t *testing.T) {
	const culprit = "github.com/memdoctor/memdoctor/lab.(*dashboardService).render"
	var leakProfile string
	first, last := mechanism(t, "goroutine-unreachable", func() float64 {
		if p := pprof.Lookup("goroutineleak"); p != nil {
			var b strings.Builder
			if err := p.WriteTo(&b, 1); err != nil {
				t.Errorf("goroutineleak profile: %v", err)
			}
			leakProfile = b.String()
		}
		return float64(goroutinesIn(culprit))
	})
	t.Logf("goroutines in render %.0f -> %.0f in 4s", first, last)
	if last-first < 20 { // about 48 expected
		t.Errorf("goroutines in render grew by %.0f in 4s; the abandoned renders should leak about 12 a second", last-first)
	}
	// With Go 1.27, or 1.26 built with GOEXPERIMENT=goroutineleakprofile,
	// the runtime proves the leak itself: the channel is unreachable, even
	// from the lab's bookkeeping.
	if pprof.Lookup("goroutineleak") == nil {
		t.Logf("%s has no goroutineleak profile; the count alone shows the leak", runtime.Version())
		return
	}
	header, _, _ := strings.Cut(leakProfile, "\n")
	t.Logf("goroutineleak profile: %s", header)
	var total int
	if _, err := fmt.Sscanf(header, "goroutineleak profile: total %d", &total); err != nil {
		t.Fatalf("goroutineleak profile header %q: %v", header, err)
	}
	if total < int(last)/2 || !strings.Contains(leakProfile, culprit) {
		t.Errorf("goroutineleak profile lists %d goroutines (%d are in render), want most of them, in render:\n%s", total, int(last), leakProfile)
	}
}

func TestIdempotencyStoreLeakRate(t *testing.T) {
	s := &idempotencyStore{byKey: make(map[string][]byte)}
	req := &paymentRequest{AmountCents: 1299, Currency: "EUR", Merchant: "m-1138"}
	per := retainedPer(2000, func(i int) { s.remember("pay-"+strconv.Itoa(i), req) })
	perMinute := per * paymentsPerSecond * 60 / mib
	t.Logf("%.0f bytes kept per payment: %.2f MiB a minute at %d payments/s", per, perMinute, paymentsPerSecond)
	if perMinute < 1 || perMinute > 2 {
		t.Errorf("the store leaks %.2f MiB a minute, want 1 to 2", perMinute)
	}
	runtime.KeepAlive(s)
}

func TestSlowLeakSteadyHeap(t *testing.T) {
	before := liveHeapAfterGC()
	r := newRiskTable(riskTableBytes)
	size := liveHeapAfterGC() - before
	t.Logf("risk table: %.1f MiB", size/mib)
	if size < 20*mib || size > 40*mib {
		t.Errorf("the steady heap is %.1f MiB, want 20-40 MiB", size/mib)
	}
	runtime.KeepAlive(r)
}
