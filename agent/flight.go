package agent

import (
	"fmt"
	"io"
	"runtime/trace"
	"slices"
	"sync"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
	"github.com/memdoctor/memdoctor/agent/wire"
)

// TraceInfo describes one flight-recorder snapshot: an entry of GET /debug/memdoctor/traces.
type TraceInfo = wire.TraceInfo

// flight keeps a runtime/trace flight recorder running and the last few snapshots of it.
type flight struct {
	fr       *trace.FlightRecorder
	max      int
	maxBytes int // a snapshot's bound: record.MaxTraceBytes, what a session stores

	mu     sync.Mutex
	traces []keptTrace
}

type keptTrace struct {
	TraceInfo
	data []byte
}

const traceTimeLayout = "20060102T150405.000Z"

// startFlight starts a flight recorder keeping at least minAge and about maxBytes of trace.
// It fails when another flight recorder is active in the process.
func startFlight(minAge time.Duration, maxBytes uint64, keep int) (*flight, error) {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: minAge, MaxBytes: maxBytes})
	if err := fr.Start(); err != nil {
		return nil, fmt.Errorf("start the flight recorder: %w", err)
	}
	return &flight{fr: fr, max: keep, maxBytes: record.MaxTraceBytes}, nil
}

// snapshot writes the flight recorder's window and keeps it under a name carrying t and the
// triggers it covers.
func (f *flight) snapshot(t time.Time, trigger string, events []uint64) (TraceInfo, error) {
	w := cappedWriter{max: f.maxBytes}
	if _, err := f.fr.WriteTo(&w); err != nil {
		return TraceInfo{}, fmt.Errorf("snapshot the flight recorder: %w", err)
	}
	ti := TraceInfo{
		Name:   "trace-" + t.UTC().Format(traceTimeLayout) + "-" + trigger + ".trace",
		Time:   t.UTC(),
		Size:   len(w.b),
		Events: slices.Clone(events),
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.traces = append(f.traces, keptTrace{TraceInfo: ti, data: w.b})
	if len(f.traces) > f.max {
		f.traces[0] = keptTrace{}
		f.traces = slices.Delete(f.traces, 0, 1)
	}
	return ti, nil
}

func (f *flight) list() []TraceInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]TraceInfo, 0, len(f.traces))
	for _, t := range f.traces {
		out = append(out, t.TraceInfo)
	}
	return out
}

// writeTo writes the named trace to w. The bytes of a kept trace are never modified, so they
// are written without the lock.
func (f *flight) writeTo(name string, w io.Writer) (bool, error) {
	f.mu.Lock()
	var data []byte
	found := false
	for _, t := range f.traces {
		if t.Name == name {
			data, found = t.data, true
		}
	}
	f.mu.Unlock()
	if !found {
		return false, nil
	}
	_, err := w.Write(data)
	return true, err
}

func (f *flight) stop() { f.fr.Stop() }

// errTraceTooLarge: a snapshot over what a session stores.
var errTraceTooLarge = fmt.Errorf("the trace is over %d MiB, what a memdoctor session stores: dropped (lower WithFlightRecorder's maxBytes)", record.MaxTraceBytes>>20)

// cappedWriter keeps what is written to it, up to max bytes.
type cappedWriter struct {
	b   []byte
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.max {
		return 0, errTraceTooLarge
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
