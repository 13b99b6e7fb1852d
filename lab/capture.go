package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// This file holds what the reassembly scenarios share: the wire format of a
// batch of captured TCP segments (POST /ingest) and the simulated capture
// that the load generator sends.
//
// A batch is a sequence of segments, each a 15-byte big-endian header
//
//	flow uint64 | seq uint32 | flags uint8 | len uint16
//
// followed by len bytes of payload.

const (
	segHeaderLen  = 15
	segFlagFIN    = 1
	segMaxPayload = 1460 // an Ethernet MSS
)

// segmentReader decodes a batch into packets. Like a capture library's
// default decoding (gopacket.NewPacket copies the data it is given), it
// allocates every packet and its payload, so packets are safe to keep; they
// are garbage as soon as the assembler is done with them.
type segmentReader struct {
	br  *bufio.Reader
	hdr [segHeaderLen]byte
}

var segmentReaders = sync.Pool{New: func() any {
	return &segmentReader{br: bufio.NewReaderSize(nil, 32<<10)}
}}

type capturedSegment struct {
	flow    uint64
	seq     uint32
	fin     bool
	payload []byte
}

// next decodes the next segment; io.EOF at the end of the batch.
func (d *segmentReader) next() (*capturedSegment, error) {
	if _, err := io.ReadFull(d.br, d.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("truncated segment header: %w", err)
		}
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(d.hdr[13:]))
	if n > segMaxPayload {
		return nil, fmt.Errorf("segment payload of %d bytes exceeds %d", n, segMaxPayload)
	}
	seg := &capturedSegment{
		flow:    binary.BigEndian.Uint64(d.hdr[0:]),
		seq:     binary.BigEndian.Uint32(d.hdr[8:]),
		fin:     d.hdr[12]&segFlagFIN != 0,
		payload: make([]byte, n),
	}
	if _, err := io.ReadFull(d.br, seg.payload); err != nil {
		return nil, fmt.Errorf("truncated segment payload: %w", err)
	}
	return seg, nil
}

// segmentSink is an assembler: it receives decoded segments one at a time.
type segmentSink interface {
	add(seg *capturedSegment)
}

// ingestSegments decodes the batch in r.Body and feeds it to sink; it answers
// 204 No Content, or 400 on a malformed batch.
func ingestSegments(w http.ResponseWriter, r *http.Request, sink segmentSink) {
	d := segmentReaders.Get().(*segmentReader)
	d.br.Reset(r.Body)
	defer func() {
		d.br.Reset(nil)
		segmentReaders.Put(d)
	}()
	for {
		seg, err := d.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			http.Error(w, "bad segment batch: "+err.Error(), http.StatusBadRequest)
			return
		}
		sink.add(seg)
	}
	w.WriteHeader(http.StatusNoContent)
}

// seqAfter reports whether sequence number a comes after b (RFC 1982
// serial arithmetic, so that wrapping sequence numbers compare right).
func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }

// streamParser stands in for the protocol parser that consumes a reassembled
// stream: it counts bytes and HTTP messages.
type streamParser struct {
	bytes    int64
	messages int64
}

var httpVersion = []byte("HTTP/1.1")

func (p *streamParser) consume(data []byte) {
	p.bytes += int64(len(data))
	p.messages += int64(bytes.Count(data, httpVersion))
}

// captureSim simulates the capture the agent sees: active flows of
// flowSegments segments each, interleaved, with a few adjacent segments
// swapped (reordering the assembler repairs at once) and, on lossy flows, a
// small share of segments dropped for good (gaps that are never filled).
type captureSim struct {
	rng      *rand.Rand
	flows    []simFlow
	nextFlow uint64
	text     []byte // HTTP traffic the payloads are cut from
	buf      []byte // the batch being built, reused
	// every lossyEvery-th flow drops each segment with probability dropProb.
	lossyEvery int
	dropProb   float64
}

type simFlow struct {
	id    uint64
	seq   uint32
	sent  int
	lossy bool
}

const (
	flowSegments   = 256
	segPayloadSize = 1400
	simActiveFlows = 48
)

func newCaptureSim(worker int, lossyEvery int, dropProb float64) *captureSim {
	s := &captureSim{
		rng:        rand.New(rand.NewPCG(uint64(worker)+1, 0x9e3779b97f4a7c15)),
		nextFlow:   uint64(worker+1) << 40,
		text:       httpTrafficText(64 << 10),
		lossyEvery: lossyEvery,
		dropProb:   dropProb,
	}
	for range simActiveFlows {
		s.flows = append(s.flows, s.newFlow())
	}
	return s
}

func (s *captureSim) newFlow() simFlow {
	s.nextFlow++
	return simFlow{
		id:    s.nextFlow,
		seq:   s.rng.Uint32(),
		lossy: s.lossyEvery > 0 && s.nextFlow%uint64(s.lossyEvery) == 0,
	}
}

// batch builds a batch of about n segments in a reused buffer.
func (s *captureSim) batch(n int) []byte {
	s.buf = s.buf[:0]
	for range n {
		i := s.rng.IntN(len(s.flows))
		f := &s.flows[i]
		swap := f.sent > 0 && f.sent+2 < flowSegments && s.rng.IntN(100) < 3
		if swap {
			// Send the next two segments in reverse order.
			s.appendSegment(f, f.seq+segPayloadSize, f.sent+1)
			s.appendSegment(f, f.seq, f.sent)
			f.seq += 2 * segPayloadSize
			f.sent += 2
		} else {
			// Lossy flows lose segments, never the first one (the
			// assembler learns the initial sequence number from it).
			if !(f.lossy && f.sent > 0 && s.rng.Float64() < s.dropProb) {
				s.appendSegment(f, f.seq, f.sent)
			}
			f.seq += segPayloadSize
			f.sent++
		}
		if f.sent >= flowSegments {
			*f = s.newFlow()
		}
	}
	return s.buf
}

func (s *captureSim) appendSegment(f *simFlow, seq uint32, index int) {
	var flags byte
	if index == flowSegments-1 {
		flags = segFlagFIN
	}
	off := int((f.id*7 + uint64(index)*segPayloadSize) % uint64(len(s.text)-segPayloadSize))
	s.buf = binary.BigEndian.AppendUint64(s.buf, f.id)
	s.buf = binary.BigEndian.AppendUint32(s.buf, seq)
	s.buf = append(s.buf, flags)
	s.buf = binary.BigEndian.AppendUint16(s.buf, segPayloadSize)
	s.buf = append(s.buf, s.text[off:off+segPayloadSize]...)
}

// captureLoad posts batches of segments to /ingest: about segmentsPerSecond
// segments a second from one worker (the only user of the simulator).
func captureLoad(segmentsPerSecond int, lossyEvery int, dropProb float64) load {
	const batchSegments = 64
	sim := newCaptureSim(0, lossyEvery, dropProb)
	every := time.Duration(int64(time.Second) * batchSegments / int64(segmentsPerSecond))
	return load{
		workers: 1,
		every:   every,
		send: func(ctx context.Context, c *client, _ int) error {
			body := sim.batch(batchSegments)
			return c.send(ctx, call{method: http.MethodPost, path: "/ingest",
				contentType: "application/octet-stream", body: bytes.NewReader(body)})
		},
	}
}
