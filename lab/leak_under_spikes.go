package lab

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func leakUnderSpikes() Scenario {
	return Scenario{
		Name: "leak-under-spikes",
		Story: "A telemetry gateway opens a session for each device that says hello and keeps, per " +
			"session, a 32 KiB ring of the device's recent readings. Sessions are keyed by device ID " +
			"and never dropped when a device goes away, and devices reconnect under new IDs, so the " +
			"map grows by about 2.5 MiB a second. Every 11 seconds a batch of readings arrives as a " +
			"gzip upload of about 150 MB uncompressed, which the handler inflates whole into one " +
			"buffer before parsing it: the heap jumps by 150 MB and falls back when the buffer " +
			"becomes garbage. The spikes are far taller than what the leak adds between them, so the " +
			"leak shows only in the floor the heap returns to, which rises from burst to burst. Both " +
			"need a fix: expire idle sessions (or drop them on disconnect), and parse the upload as a " +
			"stream (a bufio.Scanner over the gzip.Reader) so that it costs a small buffer.",
		Expect: Expect{
			Kinds:    []string{kindHeapLeak, kindTransientSpike},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*deviceSessions).open",
			Culprits: map[string]string{kindTransientSpike: "github.com/memdoctor/memdoctor/lab.(*readingsImport).inflateWhole"},
			Absent:   []string{kindGoroutineLeak, kindNonGoMemory},
			// The GC runs only when a burst lifts the heap past its goal, every 11 s, and each
			// live-heap reading holds that burst's buffer: about five readings a minute say
			// what the leak adds, and heap profiles show a burst two cycles (22 s) after it.
			// A minute makes both suspected; two confirm them.
			Confirm:  2 * time.Minute,
			Watch:    45 * time.Second,
			Interval: 3 * time.Second,
		},
		Run: runLeakUnderSpikes,
	}
}

const (
	deviceRingBytes  = 32 << 10
	deviceHellos     = 80               // per second: 80 x 32 KiB = 2.5 MiB/s
	sessionsLabCap   = 576 << 20        // lab safety valve: past it no session is kept
	readingsUpload   = 150_000_000      // bytes, uncompressed
	readingsEvery    = 11 * time.Second // one upload per period
	readingsLabLimit = 160_000_000      // the largest upload the handler accepts
)

func runLeakUnderSpikes(ctx context.Context, env Env) error {
	sessions := newDeviceSessions()
	imp := &readingsImport{}
	upload, err := gzipRepeated(readingsUpload)
	if err != nil {
		return fmt.Errorf("lab: leak-under-spikes: %w", err)
	}
	var device atomic.Int64
	return serve(ctx, env, service{
		name: "leak-under-spikes",
		routes: map[string]http.HandlerFunc{
			"POST /devices/{id}/hello": sessions.handleHello,
			"POST /readings":           imp.handleUpload,
		},
		loads: []load{
			{workers: 2, every: time.Second / deviceHellos, send: func(ctx context.Context, c *client, _ int) error {
				id := strconv.FormatInt(device.Add(1), 10)
				return c.send(ctx, call{method: http.MethodPost, path: "/devices/dev-" + id + "/hello"})
			}},
			{workers: 1, every: readingsEvery, send: func(ctx context.Context, c *client, _ int) error {
				h := http.Header{"X-Uncompressed-Length": {strconv.Itoa(readingsUpload)}}
				return c.send(ctx, call{method: http.MethodPost, path: "/readings", header: h,
					contentType: "text/csv", encoding: "gzip", body: bytes.NewReader(upload)})
			}},
		},
	})
}

// deviceSessions is the gateway's session table. The bug: nothing ever
// deletes a session.
type deviceSessions struct {
	mu    sync.Mutex
	byID  map[string]*deviceSession
	bytes int64
}

type deviceSession struct {
	id     string
	opened time.Time
	recent []byte // a ring of the device's recent readings
}

func newDeviceSessions() *deviceSessions {
	return &deviceSessions{byID: make(map[string]*deviceSession)}
}

func (d *deviceSessions) handleHello(w http.ResponseWriter, r *http.Request) {
	s := d.open(r.PathValue("id"))
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, s.id)
}

// open returns the device's session, creating it on first hello. Sessions
// stay in the map for ever: this is where the heap leaks.
func (d *deviceSessions) open(id string) *deviceSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.byID[id]; ok {
		return s
	}
	s := &deviceSession{id: id, opened: time.Now()}
	if d.bytes+deviceRingBytes > sessionsLabCap {
		return s // lab cap reached: serve without keeping it
	}
	s.recent = make([]byte, deviceRingBytes)
	for i := range s.recent { // the greeting fills the ring, so its pages are resident
		s.recent[i] = byte(i)
	}
	d.byID[id] = s
	d.bytes += deviceRingBytes
	return s
}

// readingsImport parses uploaded batches of readings.
type readingsImport struct {
	rows atomic.Int64
}

func (imp *readingsImport) handleUpload(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.Header.Get("X-Uncompressed-Length"))
	if err != nil || n <= 0 || n > readingsLabLimit {
		http.Error(w, fmt.Sprintf("X-Uncompressed-Length must be 1 to %d bytes", readingsLabLimit), http.StatusBadRequest)
		return
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		http.Error(w, "bad gzip body: "+err.Error(), http.StatusBadRequest)
		return
	}
	defer zr.Close()
	data, err := imp.inflateWhole(zr, n)
	if err != nil {
		http.Error(w, "reading upload: "+err.Error(), http.StatusBadRequest)
		return
	}
	rows := bytes.Count(data, newline)
	imp.rows.Add(int64(rows))
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.Itoa(rows))
}

// inflateWhole decompresses the whole upload into one buffer of the size
// the client declared: the spike.
func (imp *readingsImport) inflateWhole(zr io.Reader, n int) ([]byte, error) {
	data := make([]byte, n)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, err
	}
	return data, nil
}

// gzipRepeated returns a gzip stream of n bytes of CSV readings made of one
// short block repeated: one gzip member per MiB, all alike (a gzip stream may
// hold several members, and gzip.Reader reads them as one), so that it is
// cheap to build and compresses more than a hundredfold: the load sends
// little while the server inflates a lot.
func gzipRepeated(n int) ([]byte, error) {
	var block []byte
	for i := 0; len(block) < 8<<10; i++ {
		block = fmt.Appendf(block, "dev-%05d,2024-05-01T10:%02d:%02dZ,temperature,%d.%d\n", i*37%50000, i/60%60, i%60, 15+i%20, i%10)
	}
	const unit = 1 << 20
	plain := bytes.Repeat(block, unit/len(block)+1)[:unit]
	member := func(size int) ([]byte, error) {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		if _, err := zw.Write(plain[:size]); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	full, err := member(unit)
	if err != nil {
		return nil, err
	}
	out := bytes.Repeat(full, n/unit)
	if rest := n % unit; rest > 0 {
		last, err := member(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, last...)
	}
	return out, nil
}
