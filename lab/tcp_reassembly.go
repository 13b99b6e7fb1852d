package lab

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

func tcpReassembly() Scenario {
	return Scenario{
		Name: "tcp-reassembly",
		Story: "An API-traffic agent reassembles the TCP streams it captures before parsing them. " +
			"Segments that arrive ahead of a gap are copied into a per-connection out-of-order buffer " +
			"until the missing segment shows up. The capture drops about 1% of segments on some " +
			"flows, so those gaps are never filled, and each such connection buffers every later " +
			"segment until its 10-minute timeout: the buffers are bounded only by the timeout, and " +
			"the live heap grows by megabytes a second. The fix is a global budget of buffered pages " +
			"shared by all assemblers that skips the oldest gap when it is exhausted (gopacket's " +
			"MaxBufferedPagesTotal; see tcp-reassembly-budget).",
		Expect: Expect{
			Kinds: []string{kindHeapLeak},
			// The capture reader allocates every segment: the top allocating site.
			Allowed:  []string{kindAllocationHotspot},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*assembler).bufferSegment",
			Watch:    40 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runTCPReassembly,
	}
}

// reassemblyLabCap is the lab's safety valve, not part of the story: past it
// the leaky assembler stops buffering, so that a forgotten scenario cannot
// eat the machine. At the scenario's rate it is reached after minutes.
const reassemblyLabCap = 768 << 20

func runTCPReassembly(ctx context.Context, env Env) error {
	a := newAssembler(10 * time.Minute)
	return serve(ctx, env, service{
		name:       "tcp-reassembly",
		routes:     map[string]http.HandlerFunc{"POST /ingest": a.handleIngest},
		loads:      []load{captureLoad(6400, 2, 0.02)},
		background: []func(context.Context){a.expireLoop},
	})
}

// assembler reassembles captured TCP streams. It buffers out-of-order
// segments per connection without any limit but the connection timeout.
type assembler struct {
	timeout time.Duration

	mu       sync.Mutex
	streams  map[uint64]*stream
	buffered int64 // payload bytes held in out-of-order buffers
	overCap  int64 // segments not buffered because of reassemblyLabCap
}

type stream struct {
	next     uint32    // next expected sequence number
	pending  []segment // out-of-order segments, sorted by seq
	lastSeen time.Time
	finished bool // FIN delivered
	parser   streamParser
}

type segment struct {
	seq  uint32
	fin  bool
	data []byte
}

func newAssembler(timeout time.Duration) *assembler {
	return &assembler{timeout: timeout, streams: make(map[uint64]*stream)}
}

func (a *assembler) handleIngest(w http.ResponseWriter, r *http.Request) {
	ingestSegments(w, r, a)
}

func (a *assembler) add(seg *capturedSegment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.streams[seg.flow]
	if s == nil {
		// The first segment seen sets the stream's sequence number.
		s = &stream{next: seg.seq}
		a.streams[seg.flow] = s
	}
	s.lastSeen = time.Now()
	switch {
	case seg.seq == s.next:
		s.deliver(seg.payload, seg.fin)
		a.deliverPending(s)
	case seqAfter(seg.seq, s.next):
		a.bufferSegment(s, seg)
	default:
		// A retransmission of data already delivered.
	}
	if s.finished {
		delete(a.streams, seg.flow)
	}
}

func (s *stream) deliver(data []byte, fin bool) {
	s.parser.consume(data)
	s.next += uint32(len(data))
	if fin {
		s.finished = true
	}
}

// bufferSegment keeps a segment that arrived ahead of a gap: it copies the
// payload into the connection's out-of-order buffer (so as not to pin the
// whole decoded packet), where it stays until the gap is filled or the
// connection times out.
func (a *assembler) bufferSegment(s *stream, seg *capturedSegment) {
	if a.buffered+int64(len(seg.payload)) > reassemblyLabCap {
		a.overCap++
		return
	}
	data := make([]byte, len(seg.payload))
	copy(data, seg.payload)
	i := len(s.pending)
	for i > 0 && seqAfter(s.pending[i-1].seq, seg.seq) {
		i--
	}
	if i > 0 && s.pending[i-1].seq == seg.seq {
		return // duplicate
	}
	s.pending = slices.Insert(s.pending, i, segment{seq: seg.seq, fin: seg.fin, data: data})
	a.buffered += int64(len(data))
}

// deliverPending delivers the buffered segments the stream can now continue
// with.
func (a *assembler) deliverPending(s *stream) {
	n := 0
	for _, p := range s.pending {
		if seqAfter(p.seq, s.next) {
			break
		}
		if p.seq == s.next {
			s.deliver(p.data, p.fin)
		}
		a.buffered -= int64(len(p.data))
		n++
	}
	s.pending = slices.Delete(s.pending, 0, n)
}

// expireLoop drops the connections idle for longer than the timeout, with
// whatever they buffered.
func (a *assembler) expireLoop(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			a.expire(now)
		}
	}
}

func (a *assembler) expire(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, s := range a.streams {
		if now.Sub(s.lastSeen) > a.timeout {
			for _, p := range s.pending {
				a.buffered -= int64(len(p.data))
			}
			delete(a.streams, id)
		}
	}
}
