package record

import (
	"errors"
	"fmt"
	"path/filepath"
)

// TracesDir holds runtime/trace files (flight-recorder snapshots an embedded agent took around
// a trigger), named by the agent, e.g. "trace-20261122T064512.345Z-heap-jump.trace".
const TracesDir = "traces"

// MaxTraceBytes bounds a stored trace, on write and on read: a flight-recorder snapshot
// keeps about 8 MiB by default (the agent's WithFlightRecorder), and the trace parser's
// memory grows with what it reads.
const MaxTraceBytes = 64 << 20

// ErrTraceTooLarge is wrapped by the error of WriteTrace for a trace over MaxTraceBytes.
var ErrTraceTooLarge = errors.New("trace larger than memdoctor stores")

// WriteTrace stores a runtime/trace file as it was captured under traces/name and returns its
// path relative to the session directory. name must pass CheckTraceName. The file appears
// whole or not at all. A trace over MaxTraceBytes is refused (ErrTraceTooLarge).
func (w *Writer) WriteTrace(name string, data []byte) (string, error) {
	if err := CheckTraceName(name); err != nil {
		return "", fmt.Errorf("write trace: %w", err)
	}
	if len(data) > MaxTraceBytes {
		return "", fmt.Errorf("write trace %s: %w: %d MiB, over %d MiB", name, ErrTraceTooLarge, len(data)>>20, MaxTraceBytes>>20)
	}
	dir := filepath.Join(w.dir, TracesDir)
	if err := w.fs.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("session directory %s: %w", dir, unwrapPathError(err))
	}
	rel := filepath.Join(TracesDir, name)
	if err := writeFileAtomic(w.fs, filepath.Join(w.dir, rel), data); err != nil {
		return "", err
	}
	return rel, nil
}
