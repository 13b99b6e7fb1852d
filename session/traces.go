package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// TracesDir holds runtime/trace files (flight-recorder snapshots an embedded agent took around
// a trigger), named by the agent, e.g. "trace-20261122T064512.345Z-heap-jump.trace".
const TracesDir = "traces"

// WriteTrace stores a runtime/trace file as it was captured under traces/name and returns its
// path relative to the session directory. name must pass CheckTraceName. The file appears
// whole or not at all.
func (w *Writer) WriteTrace(name string, data []byte) (string, error) {
	if err := CheckTraceName(name); err != nil {
		return "", fmt.Errorf("write trace: %w", err)
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

// TraceFiles returns the paths of the trace files stored in a session directory, sorted by
// name (which sorts by time for the names agents write). A session without traces has none.
func TraceFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, TracesDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") { // temporary files of an interrupted write
			continue
		}
		out = append(out, filepath.Join(dir, TracesDir, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}
