package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memdoctor/memdoctor/infile"
)

// TraceFiles returns the paths of the trace files stored in a session directory, sorted by
// name (which sorts by time for the names agents write). A session without traces has none.
// Open each with OpenTrace, which checks it.
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

// OpenTrace opens a stored trace for reading: a regular file of at most MaxTraceBytes
// (package infile), read no further than its size when opened.
func OpenTrace(path string) (io.ReadCloser, error) {
	return infile.Open(path, MaxTraceBytes)
}
