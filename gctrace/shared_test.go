package gctrace_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/gctrace"
)

// sharedDir holds real gctrace excerpts from golang/go issues, verbatim, each with its
// source URL (third-party text: see the README there).
const sharedDir = "testdata/issues"

// TestSharedExcerpts parses every real excerpt: each line that is not a "#"
// comment must be a cycle or other runtime trace, with no parse errors, and
// the cycles of a block must make sense. A block ends at a comment line or
// where cycle numbers restart at 1 (a new process in the same log).
func TestSharedExcerpts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedDir, "*.txt"))
	if len(files) < 10 {
		t.Fatalf("%d excerpts in %s, want the ten of golang/go issues", len(files), sharedDir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cycles, other := checkExcerpt(t, string(data))
			if cycles+other == 0 {
				t.Fatal("no trace lines")
			}
			// The Scanner must agree with line-by-line parsing.
			s := gctrace.NewScanner(strings.NewReader(string(data)))
			n := 0
			for s.Scan() {
				n++
			}
			if n != cycles || s.Skipped() != 0 || s.Err() != nil {
				t.Errorf("Scanner: %d cycles, %d skipped, err %v; ParseLine found %d cycles", n, s.Skipped(), s.Err(), cycles)
			}
			t.Logf("%d cycles, %d other runtime trace lines", cycles, other)
		})
	}
}

func checkExcerpt(t *testing.T, data string) (cycles, other int) {
	var prev *gctrace.Cycle
	sc := bufio.NewScanner(strings.NewReader(data))
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			prev = nil
			continue
		}
		c, ok, err := gctrace.ParseLine(line)
		switch {
		case err != nil:
			t.Errorf("line %d: %v", ln, err)
			continue
		case !ok:
			if !gctrace.IsRuntimeTrace(line) {
				t.Errorf("line %d is neither a cycle nor runtime trace: %q", ln, line)
			}
			other++
			continue
		}
		cycles++
		checkInvariants(t, line, c)
		if c.HeapLive > c.HeapEnd {
			t.Errorf("line %d: live %d > heap at mark end %d", ln, c.HeapLive, c.HeapEnd)
		}
		if c.Goal == 0 || c.Procs == 0 {
			t.Errorf("line %d: goal %d, procs %d; want both > 0", ln, c.Goal, c.Procs)
		}
		if prev != nil && c.N == 1 {
			t.Logf("line %d: cycle numbers restart at 1: a new process", ln)
			prev = nil
		}
		if prev != nil && (c.N <= prev.N || c.At < prev.At) {
			t.Errorf("line %d: gc %d @%v follows gc %d @%v", ln, c.N, c.At, prev.N, prev.At)
		}
		prev = &c
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cycles, other
}
