package gctrace_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/gctrace"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the parser's output")

// golden is what a Scanner makes of one testdata input.
type golden struct {
	Cycles  []gctrace.Cycle
	Skipped int
}

// TestGolden scans each testdata/*.txt and compares the cycles with
// testdata/*.golden.json (regenerate with go test -run Golden -update).
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs in testdata: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var g golden
			s := gctrace.NewScanner(f)
			for s.Scan() {
				g.Cycles = append(g.Cycles, s.Cycle())
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			g.Skipped = s.Skipped()
			got, err := json.MarshalIndent(g, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := strings.TrimSuffix(in, ".txt") + ".golden.json"
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run with -update after checking the change):\n%s", path, got)
			}
		})
	}
}
