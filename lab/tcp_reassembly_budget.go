package lab

import (
	"context"
	"net/http"
	"sync"
	"time"
	"unsafe"
)

func tcpReassemblyBudget() Scenario {
	return Scenario{
		Name: "tcp-reassembly-budget",
		Story: "The fix for tcp-reassembly: the same capture (about 1% of segments lost on some flows) " +
			"goes to several assemblers that buffer out-of-order data in pages taken from one shared, " +
			"preallocated pool of 32 MiB, like gopacket's StreamPool with " +
			"AssemblerOptions.MaxBufferedPagesTotal. When the pool is exhausted, the assembler skips " +
			"the oldest gap: it gives up on the missing bytes, delivers what it buffered after them " +
			"and returns those pages to the pool. Memory is bounded by the budget whatever the loss " +
			"rate, and the live heap stays flat.",
		Expect: Expect{
			Absent:   []string{kindHeapLeak, kindOOMRisk},
			Watch:    30 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runTCPReassemblyBudget,
	}
}

const (
	pageSize          = 1900 // bytes of payload per page, as in gopacket
	reassemblyBudget  = 32 << 20
	pagedAssemblers   = 4
	pagePoolChunkSize = 256 // pages allocated together
)

func runTCPReassemblyBudget(ctx context.Context, env Env) error {
	pool := newPagePool(reassemblyBudget)
	var shards [pagedAssemblers]*pagedAssembler
	for i := range shards {
		shards[i] = newPagedAssembler(pool)
	}
	ing := &shardedIngest{shards: shards[:]}
	return serve(ctx, env, service{
		name:   "tcp-reassembly-budget",
		routes: map[string]http.HandlerFunc{"POST /ingest": ing.handleIngest},
		loads:  []load{captureLoad(6400, 2, 0.02)},
	})
}

// page holds one out-of-order segment.
type page struct {
	seq     uint32
	fin     bool
	n       int
	arrived time.Time
	next    *page
	data    [pageSize]byte
}

// pagePool is the global budget of buffered pages shared by the assemblers.
// All its pages are allocated up front; it never allocates afterwards.
type pagePool struct {
	mu   sync.Mutex
	free []*page
}

func newPagePool(budget int) *pagePool {
	n := budget / int(unsafe.Sizeof(page{}))
	p := &pagePool{free: make([]*page, 0, n)}
	for len(p.free) < n {
		chunk := make([]page, min(pagePoolChunkSize, n-len(p.free)))
		for i := range chunk {
			p.free = append(p.free, &chunk[i])
		}
	}
	return p
}

// get returns a free page, or nil when the budget is exhausted.
func (p *pagePool) get() *page {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return nil
	}
	pg := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return pg
}

func (p *pagePool) put(pg *page) {
	pg.next, pg.n = nil, 0
	p.mu.Lock()
	p.free = append(p.free, pg)
	p.mu.Unlock()
}

// shardedIngest spreads the flows over several assemblers.
type shardedIngest struct {
	shards []*pagedAssembler
}

func (s *shardedIngest) handleIngest(w http.ResponseWriter, r *http.Request) {
	ingestSegments(w, r, s)
}

func (s *shardedIngest) add(seg *capturedSegment) {
	s.shards[seg.flow%uint64(len(s.shards))].add(seg)
}

// pagedAssembler buffers out-of-order segments in pages from the shared
// pool, skipping its oldest gap when the pool is empty.
type pagedAssembler struct {
	pool *pagePool

	mu      sync.Mutex
	streams map[uint64]*pagedStream
	skipped int64 // gaps given up on
	dropped int64 // segments dropped for want of a page
}

type pagedStream struct {
	next     uint32
	first    *page // out-of-order pages, sorted by seq
	finished bool
	parser   streamParser
}

func newPagedAssembler(pool *pagePool) *pagedAssembler {
	return &pagedAssembler{pool: pool, streams: make(map[uint64]*pagedStream)}
}

func (a *pagedAssembler) add(seg *capturedSegment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.streams[seg.flow]
	if s == nil {
		s = &pagedStream{next: seg.seq}
		a.streams[seg.flow] = s
	}
	switch {
	case seg.seq == s.next:
		s.deliver(seg.payload, seg.fin)
		a.deliverPages(s)
	case seqAfter(seg.seq, s.next):
		a.bufferPage(s, seg)
	}
	if s.finished {
		delete(a.streams, seg.flow)
	}
}

func (s *pagedStream) deliver(data []byte, fin bool) {
	s.parser.consume(data)
	s.next += uint32(len(data))
	if fin {
		s.finished = true
	}
}

// bufferPage copies an out-of-order segment into a page of the pool; when
// the pool is exhausted it first skips the oldest gap to free pages.
func (a *pagedAssembler) bufferPage(s *pagedStream, seg *capturedSegment) {
	pg := a.pool.get()
	for pg == nil {
		if !a.skipOldestGap() {
			a.dropped++
			return
		}
		pg = a.pool.get()
	}
	pg.seq, pg.fin, pg.n, pg.arrived = seg.seq, seg.fin, copy(pg.data[:], seg.payload), time.Now()
	link := &s.first
	for *link != nil && seqAfter(seg.seq, (*link).seq) {
		link = &(*link).next
	}
	if *link != nil && (*link).seq == seg.seq {
		a.pool.put(pg) // duplicate
		return
	}
	pg.next = *link
	*link = pg
}

// deliverPages delivers the buffered pages the stream can now continue with
// and returns them to the pool.
func (a *pagedAssembler) deliverPages(s *pagedStream) {
	for pg := s.first; pg != nil && !seqAfter(pg.seq, s.next); pg = s.first {
		if pg.seq == s.next {
			s.deliver(pg.data[:pg.n], pg.fin)
		}
		s.first = pg.next
		a.pool.put(pg)
	}
}

// skipOldestGap gives up on the gap whose first buffered page is the oldest:
// the stream continues after the missing bytes. It reports false when this
// assembler buffers nothing.
func (a *pagedAssembler) skipOldestGap() bool {
	var oldest *pagedStream
	var oldestID uint64
	for id, s := range a.streams {
		if s.first != nil && (oldest == nil || s.first.arrived.Before(oldest.first.arrived)) {
			oldest, oldestID = s, id
		}
	}
	if oldest == nil {
		return false
	}
	oldest.next = oldest.first.seq
	a.deliverPages(oldest)
	a.skipped++
	if oldest.finished {
		delete(a.streams, oldestID)
	}
	return true
}
