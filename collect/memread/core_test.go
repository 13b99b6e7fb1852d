package memread_test

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/memread"
	"github.com/memdoctor/memdoctor/process"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// recordedCores are holders' recorded cores of cmd/memdoctor/testdata/holders-target (Go
// 1.26.8, runtime.MemProfileRate 4096), amd64 and arm64.
const recordedCores = "../../holders/walk/testdata/cores"

func unpack(t *testing.T, arch string) (core, exe string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"core", "holders-target"} {
		f, err := os.Open(filepath.Join(recordedCores, arch, name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o700)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(out, io.LimitReader(zr, 256<<20))
		out.Close()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "core"), filepath.Join(dir, "holders-target")
}

// TestRecordedCores reads the heap profile and the figures from a core of each architecture:
// the same samples, stacks and lines whichever machine reads them (golden files).
func TestRecordedCores(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			core, exe := unpack(t, arch)
			tg, err := process.OpenCore(core, exe)
			if err != nil {
				t.Fatal(err)
			}
			r, err := memread.New(tg)
			if err != nil {
				tg.Close()
				t.Fatal(err)
			}
			defer r.Close()
			p, hr, err := r.HeapProfile()
			if err != nil {
				t.Fatal(err)
			}
			if hr.Rate != 4096 || hr.Skipped != 0 || !hasSite(p, "main.build") {
				t.Errorf("rate %d, %d skipped, main.build sampled: %v", hr.Rate, hr.Skipped, hasSite(p, "main.build"))
			}
			g, err := r.Stats()
			if err != nil {
				t.Fatal(err)
			}
			// The program ran no GC before its core was taken: no live heap yet, the goal
			// the 4 MiB minimum of GOGC=100, and the profile counts every cycle (as
			// runtime.MemProfile does with no cycle published).
			if g.GCCycles != 0 || g.HeapLiveBytes != 0 || g.HeapGoalBytes != 4<<20 || g.GOGC != 100 || g.Goroutines != 2 ||
				g.HeapObjectsBytes == 0 || g.TotalBytes < g.HeapObjectsBytes+g.HeapReleasedBytes {
				t.Errorf("figures: %+v", g)
			}
			got := strings.Join(samples(p), "\n") + "\n"
			path := filepath.Join("testdata", "core-"+arch+".golden")
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", arch, path, got)
			}
		})
	}
}

// samples is what each heap sample says, whoever built it: its logical frames (function,
// file, line, start line) and its values and size label; samples with nothing published are
// left out.
func samples(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		nonzero := false
		for _, v := range s.Value {
			nonzero = nonzero || v != 0
		}
		if !nonzero {
			continue // a bucket made after the reading (by the fetch itself): nothing published
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%v %v:", s.Value, s.NumLabel["bytes"])
		for _, l := range s.Location {
			for _, ln := range l.Line {
				fmt.Fprintf(&b, " %s@%s:%d(%d)", ln.Function.Name, filepath.Base(ln.Function.Filename), ln.Line, ln.Function.StartLine)
			}
			b.WriteString(" |")
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out
}

// hasSite says whether a sample in use has fn as a frame.
func hasSite(p interface{ String() string }, fn string) bool {
	return strings.Contains(p.String(), fn)
}
