package lab

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/leaktest"
)

// The lab's scenarios double as examples of leaktest (docs/leaktest.md): each test below is
// the test its service's authors could have written, calling a handler in a loop with
// leaktest.Loop. The leaking scenarios fail before they ship, naming the culprit memdoctor's
// diagnosis names in production (Expect.Culprit); the controls pass.

// A payments API whose idempotency keys never expire (slow-leak): every payment's response
// is kept for good.
func TestLeaktestSlowLeak(t *testing.T) {
	p := &paymentsService{keys: &idempotencyStore{byKey: map[string][]byte{}}}
	seq := 0
	const payment = `{"amount_cents":1299,"currency":"EUR","card":"tok_visa_4242","merchant":"m-1138"}`
	failure := loopFails(t, func() {
		seq++
		req := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(payment))
		req.Header.Set("Idempotency-Key", "pay-"+strconv.Itoa(seq))
		p.handlePayment(httptest.NewRecorder(), req)
	})
	wantCulprit(t, "slow-leak", failure)
}

// A TCP reassembler that buffers out-of-order segments without a bound (tcp-reassembly):
// each stream's segment beyond a gap is kept until the connection times out.
func TestLeaktestTCPReassembly(t *testing.T) {
	a := newAssembler(0)
	payload := make([]byte, 1024)
	flow := uint64(0)
	failure := loopFails(t, func() {
		flow++
		a.add(&capturedSegment{flow: flow, seq: 1000, payload: payload})
		a.add(&capturedSegment{flow: flow, seq: 3048, payload: payload}) // after a gap: buffered
	})
	wantCulprit(t, "tcp-reassembly", failure)
}

// A search front end whose slow shard's goroutine blocks for ever on an unbuffered channel
// after the deadline (goroutine-leak).
func TestLeaktestGoroutineLeak(t *testing.T) {
	backend := httptest.NewServer(newMux(map[string]http.HandlerFunc{"GET /shard/{shard}": handleShard}))
	defer backend.Close()
	s := &searchService{backend: newClient(backend.URL, 8, 0)}
	defer s.backend.close()
	defer s.close()
	failure := loopFails(t, func() { s.fanOut(context.Background(), "shoes") })
	wantCulprit(t, "goroutine-leak", failure)
	for _, want := range []string{"[chan send]", "started by the go statement at lab/goroutine_leak.go:"} {
		if !strings.Contains(failure, want) {
			t.Errorf("the failure does not say %q", want)
		}
	}
}

// The healthy control: a catalogue read and updated in place, through pooled buffers.
func TestLeaktestHealthy(t *testing.T) {
	cat := newCatalogue(catalogueSize)
	mux := newMux(map[string]http.HandlerFunc{"GET /items/{id}": cat.handleGet, "PUT /items/{id}": cat.handlePut})
	i := 0
	leaktest.Loop(t, func() {
		id := strconv.Itoa(i % catalogueSize)
		i++
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/"+id, nil))
		body := `{"name":"item ` + id + `","price":9.5,"stock":3,"tags":["a"]}`
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/items/"+id, strings.NewReader(body)))
	})
}

// The cache-warmup control: an LRU of rendered pages bounded by bytes, which grows until it
// is full, then holds (the warm-up fills it: Warmup says how many calls that takes).
func TestLeaktestCacheWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 120 MiB cache")
	}
	c := newPageCache(pageCacheCap)
	mux := newMux(map[string]http.HandlerFunc{"GET /products/{id}": c.handlePage})
	i := 0
	leaktest.Loop(t, func() {
		i++
		id := strconv.Itoa(i * 7919 % catalogPages) // every page, in a scrambled order
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/products/"+id, nil))
	}, leaktest.Warmup(2*catalogPages))
}

// failing is a testing.TB that keeps Loop's failure instead of failing the test.
type failing struct {
	testing.TB
	msgs []string
}

func (f *failing) Helper()                      {}
func (f *failing) Error(args ...any)            { f.msgs = append(f.msgs, fmt.Sprint(args...)) }
func (f *failing) Errorf(s string, args ...any) { f.Error(fmt.Sprintf(s, args...)) }
func (f *failing) Fatal(args ...any)            { f.Error(args...) }
func (f *failing) Fatalf(s string, args ...any) { f.Error(fmt.Sprintf(s, args...)) }

// loopFails runs leaktest.Loop and returns its failure, failing the test when it passes.
func loopFails(t *testing.T, fn func()) string {
	t.Helper()
	f := &failing{TB: t}
	leaktest.Loop(f, fn)
	if len(f.msgs) == 0 {
		t.Fatal("leaktest.Loop passed the scenario's leak")
	}
	msg := strings.Join(f.msgs, "\n")
	t.Logf("leaktest's failure:\n%s", msg)
	return msg
}

// wantCulprit checks that a failure names the culprit memdoctor names in the scenario.
func wantCulprit(t *testing.T, scenario, failure string) {
	t.Helper()
	s, ok := Lookup(scenario)
	if !ok {
		t.Fatalf("no scenario %s", scenario)
	}
	if !strings.Contains(failure, s.Expect.Culprit) {
		t.Errorf("the failure does not name %s's culprit %s", scenario, s.Expect.Culprit)
	}
}
