package agenttest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/goleak"

	"github.com/memdoctor/memdoctor/agent"
)

var spikeHeld [][]byte

var churnSink []byte

// churn makes garbage until stop is closed, as a service goes on serving after a spike: the
// GCs it causes are what publish the spike's allocations in heap profiles (and show the
// agent that the rise has stopped).
func churn(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		for range 64 {
			churnSink = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}

// spikeAlloc holds 96 MiB for a moment, then lets go: a transient spike. Its 4 MiB blocks
// are each all but certain to be sampled by the heap profiler (1 - e^-8), so the profiles
// count them exactly.
//
//go:noinline
func spikeAlloc() {
	for range 24 {
		b := make([]byte, 4<<20)
		b[0] = 1
		spikeHeld = append(spikeHeld, b)
		time.Sleep(5 * time.Millisecond)
	}
	spikeHeld = nil
}

// TestSpikeCapture runs the agent in this process through a real spike: the heap-jump
// trigger fires, the pair brackets the whole spike (alloc_space, cumulative, grows by all of
// spikeAlloc's 96 MiB from "before" to "after": a "before" taken during the spike would
// miss some), and the flight recorder's snapshot is kept.
// Then Stop releases every goroutine the agent started.
func TestSpikeCapture(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	a, err := agent.Start(ctx,
		agent.WithSampleInterval(100*time.Millisecond),
		agent.WithProfileInterval(time.Hour), // only the round taken at Start
		agent.WithFlightRecorder(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first profile round", func() bool { return len(a.Profiles()) == 2 })
	spikeAlloc()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { churn(stop); close(done) }()
	waitFor(t, "the after profiles", func() bool {
		evs := a.Events()
		return len(evs) > 0 && evs[0].After != "" && evs[0].Trace != ""
	})
	close(stop)
	<-done
	ev := a.Events()[0]
	if ev.Trigger != agent.TriggerHeapJump || ev.Before == "" || ev.BeforeGoroutine == "" || ev.AfterGoroutine == "" {
		t.Fatalf("event %+v", ev)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	base := srv.URL + "/debug/memdoctor/"
	before := allocBytes(t, base+"profiles/"+ev.Before, "spikeAlloc")
	after := allocBytes(t, base+"profiles/"+ev.After, "spikeAlloc")
	// A periodic snapshot may land in the spike's first 5 ms on a loaded machine, after one of
	// its 24 allocations: the pair still brackets all the others.
	if d := after - before; d < 91<<20 || d > 97<<20 {
		t.Errorf("spikeAlloc allocated %.1f MiB between before and after; it allocated 96 MiB (4 MiB at a time)", float64(d)/(1<<20))
	}
	if tr := get(t, base+"traces/"+ev.Trace); !bytes.HasPrefix(tr, []byte("go 1.")) {
		t.Errorf("trace %s: %d bytes starting %q", ev.Trace, len(tr), tr[:min(len(tr), 16)])
	}

	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.Profiles()) == 0 || len(a.Events()) == 0 {
		t.Error("Stop dropped what was captured")
	}
}

// allocBytes returns the alloc_space of the samples of the profile at url whose stack has fn.
func allocBytes(t *testing.T, url, fn string) int64 {
	t.Helper()
	p, err := profile.ParseData(get(t, url))
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "alloc_space" {
			idx = i
		}
	}
	var sum int64
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			found := false
			for _, l := range loc.Line {
				if l.Function != nil && strings.HasSuffix(l.Function.Name, "."+fn) {
					found = true
				}
			}
			if found {
				sum += s.Value[idx]
				break
			}
		}
	}
	return sum
}

// get returns the body of a 200 answer to GET url.
func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v: %.200s", url, resp.StatusCode, err, b)
	}
	return b
}

// waitFor polls cond until it holds; the deadline only bounds a hung test, nothing is timed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
