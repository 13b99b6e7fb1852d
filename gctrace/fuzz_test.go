package gctrace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/gctrace"
)

// FuzzParseLine checks that ParseLine never panics, that every cycle it
// accepts keeps the parser's guarantees (see checkInvariants), and that the
// Scanner and IsRuntimeTrace agree with it.
func FuzzParseLine(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.line)
	}
	seedFiles, _ := filepath.Glob("testdata/*.txt")
	shared, _ := filepath.Glob(filepath.Join(sharedDir, "*.txt")) // optional extra seeds
	for _, path := range append(seedFiles, shared...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, ok, err := gctrace.ParseLine(line)
		switch {
		case ok && err != nil:
			t.Fatalf("ParseLine(%q) returned both a cycle and error %v", line, err)
		case err != nil:
			if msg := err.Error(); !strings.HasPrefix(msg, "gctrace: ") || len(msg) > 400 {
				t.Errorf("ParseLine(%q) error %q: want a short message starting \"gctrace: \"", line, msg)
			}
			if c != (gctrace.Cycle{}) {
				t.Errorf("ParseLine(%q) failed but returned %+v", line, c)
			}
			if !gctrace.IsRuntimeTrace(line) {
				t.Errorf("ParseLine(%q) saw a gc line (error %v) but IsRuntimeTrace is false", line, err)
			}
		case ok:
			checkInvariants(t, line, c)
		}
		// A Scanner over the same single line yields the same cycle, or
		// counts the same failure.
		if strings.ContainsRune(line, '\n') || len(line) > 64<<10 {
			return
		}
		s := gctrace.NewScanner(strings.NewReader(line))
		scanned := s.Scan()
		if scanned != ok || (ok && s.Cycle() != c) {
			t.Errorf("Scanner on %q: Scan %v, cycle %+v; ParseLine: ok %v, %+v", line, scanned, s.Cycle(), ok, c)
		}
		if wantSkipped := btoi(err != nil); s.Skipped() != wantSkipped {
			t.Errorf("Scanner on %q: Skipped %d, want %d", line, s.Skipped(), wantSkipped)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
