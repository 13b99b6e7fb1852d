//go:build !nopprof

package lab

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// This file checks the mechanisms of the scenarios of issues 28 and 30: a burst the GC sees
// half-way, a steady leak whose GCs come seconds apart, and a slow goroutine leak.

// TestFirmwareUploadReadsWhole: the upload handler allocates at least the body, and keeps
// nothing of it.
func TestFirmwareUploadReadsWhole(t *testing.T) {
	const n = 24 << 20
	fs := &firmwareStore{}
	req := httptest.NewRequest(http.MethodPost, "/firmware?build=7", &imageReader{left: n, seed: 7, start: time.Now().Add(-time.Hour)})
	before := liveHeapAfterGC()
	alloc0 := readMetric("/gc/heap/allocs:bytes")
	rec := httptest.NewRecorder()
	fs.handleUpload(rec, req)
	allocated := readMetric("/gc/heap/allocs:bytes") - alloc0
	kept := liveHeapAfterGC() - before
	t.Logf("%.1f MiB allocated for a %.1f MiB upload, %.0f bytes kept: %s", allocated/mib, float64(n)/mib, kept, rec.Body)
	if rec.Code != http.StatusOK || len(fs.images) != 1 || fs.images[0].Size != n {
		t.Fatalf("upload: %d %s, %+v", rec.Code, rec.Body, fs.images)
	}
	if allocated < n {
		t.Errorf("the upload allocated %.1f MiB, want at least the %.1f MiB read whole", allocated/mib, float64(n)/mib)
	}
	if kept > 1<<20 {
		t.Errorf("the upload kept %.1f MiB: a burst must be garbage once answered", kept/mib)
	}
	runtime.KeepAlive(fs)
}

// TestSpanExporterLeakRate: each request keeps its span, about 7 KiB: 0.7 MB/s at the
// scenario's 100 requests a second.
func TestSpanExporterLeakRate(t *testing.T) {
	x := &spanExporter{}
	req := httptest.NewRequest(http.MethodGet, "/orders/1", nil)
	per := retainedPer(2000, func(i int) { x.record(req, strconv.Itoa(i), time.Now()) })
	t.Logf("%.0f bytes kept per request: %.2f MB a second at %d requests/s", per, per*spanRequests/1e6, spanRequests)
	if rate := per * spanRequests / 1e6; rate < 0.5 || rate > 1 {
		t.Errorf("the exporter keeps %.2f MB a second, want about 0.7", rate)
	}
	runtime.KeepAlive(x)
}

// TestWebhookLeakBlocksDeliveries: one delivery in webhookSlowEach outlives its wait and stays
// blocked in deliver; the others return.
func TestWebhookLeakBlocksDeliveries(t *testing.T) {
	const culprit = "github.com/memdoctor/memdoctor/lab.(*notifier).deliver"
	srv := httptest.NewServer(http.HandlerFunc(handleWebhook))
	defer srv.Close()
	n := &notifier{hook: newClient(srv.URL, 4, 0)}
	before := goroutinesIn(culprit)
	const events = 3 * webhookSlowEach
	for i := range events {
		rec := httptest.NewRecorder()
		n.handleEvent(rec, httptest.NewRequest(http.MethodPost, "/events?seq="+strconv.Itoa(i), nil))
		if rec.Code != http.StatusAccepted {
			t.Fatalf("event %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	time.Sleep(2 * webhookSlow) // the slow calls answer; their goroutines find nobody to tell
	blocked := goroutinesIn(culprit) - before
	t.Logf("%d events: %d goroutines blocked in deliver", events, blocked)
	if blocked != events/webhookSlowEach {
		t.Errorf("%d goroutines blocked in deliver after %d events, want %d", blocked, events, events/webhookSlowEach)
	}
	n.close()
	n.hook.close()
	time.Sleep(100 * time.Millisecond)
	if left := goroutinesIn(culprit) - before; left != 0 {
		t.Errorf("%d goroutines still in deliver after close", left)
	}
}
