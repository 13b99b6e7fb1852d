//go:build !nopprof

package lab

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
	"unsafe"
)

// feed decodes a batch built by the simulator and hands it to sink.
func feed(t *testing.T, sink segmentSink, batch []byte) {
	t.Helper()
	d := &segmentReader{br: bufio.NewReader(bytes.NewReader(batch))}
	for {
		seg, err := d.next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		sink.add(seg)
	}
}

func TestSeqAfterWraps(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		want bool
	}{{2, 1, true}, {1, 2, false}, {1, 1, false}, {5, 0xfffffff0, true}, {0xfffffff0, 5, false}} {
		if got := seqAfter(c.a, c.b); got != c.want {
			t.Errorf("seqAfter(%#x, %#x) = %v", c.a, c.b, got)
		}
	}
}

func TestAssemblerRepairsReordering(t *testing.T) {
	a := newAssembler(time.Minute)
	sim := newCaptureSim(0, 0, 0) // reordering, no loss
	for range 2000 {
		feed(t, a, sim.batch(64))
	}
	if a.buffered != 0 {
		t.Errorf("%d bytes still buffered without any loss", a.buffered)
	}
	if len(a.streams) > simActiveFlows {
		t.Errorf("%d streams open, at most %d flows are active", len(a.streams), simActiveFlows)
	}
}

func TestAssemblerBuffersBehindGaps(t *testing.T) {
	a := newAssembler(time.Minute)
	sim := newCaptureSim(0, 2, 0.02)
	var buffered []int64
	for range 4 {
		for range 500 {
			feed(t, a, sim.batch(64))
		}
		buffered = append(buffered, a.buffered)
	}
	t.Logf("buffered after each 32,000 segments: %d", buffered)
	for i := 1; i < len(buffered); i++ {
		if buffered[i] <= buffered[i-1] {
			t.Fatalf("buffers did not grow: %d", buffered)
		}
	}
	// Nothing is dropped by the expiry before the timeout...
	a.expire(time.Now())
	if a.buffered != buffered[len(buffered)-1] {
		t.Errorf("expire before the timeout freed %d bytes", buffered[len(buffered)-1]-a.buffered)
	}
	// ...and everything after it.
	a.expire(time.Now().Add(2 * time.Minute))
	if a.buffered != 0 || len(a.streams) != 0 {
		t.Errorf("after the timeout: %d bytes buffered, %d streams", a.buffered, len(a.streams))
	}
}

func TestPagedAssemblerStaysInBudget(t *testing.T) {
	const pages = 300
	pool := newPagePool(pages * int(unsafe.Sizeof(page{})))
	if len(pool.free) != pages {
		t.Fatalf("pool of %d pages, want %d", len(pool.free), pages)
	}
	shards := []*pagedAssembler{newPagedAssembler(pool), newPagedAssembler(pool)}
	ing := &shardedIngest{shards: shards}
	sim := newCaptureSim(0, 2, 0.02)
	for range 2000 {
		feed(t, ing, sim.batch(64))
	}
	held := 0
	var skipped int64
	for _, a := range shards {
		skipped += a.skipped
		for _, s := range a.streams {
			for pg := s.first; pg != nil; pg = pg.next {
				held++
			}
		}
	}
	if held+len(pool.free) != pages {
		t.Errorf("%d pages held + %d free != %d", held, len(pool.free), pages)
	}
	if skipped == 0 {
		t.Error("the budget was never exhausted: no gap skipped")
	}
	t.Logf("%d gaps skipped, %d pages held", skipped, held)
}

func TestIngestRejectsTruncatedBatch(t *testing.T) {
	sim := newCaptureSim(0, 0, 0)
	batch := sim.batch(4)
	for _, n := range []int{segHeaderLen - 1, segHeaderLen + 10} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/ingest", bytes.NewReader(batch[:n]))
		newAssembler(time.Minute).handleIngest(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("batch cut at %d bytes: status %d, want 400", n, rec.Code)
		}
	}
}
