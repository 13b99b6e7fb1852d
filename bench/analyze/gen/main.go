// Command gen writes a folder of heap profiles for bench/analyze/run.sh: one hour of a
// service's heap profiles at 10 s (360), made from a real profile of a few thousand samples
// (node_exporter's, testdata/profiles), in which one site leaks.
//
//	gen -out DIR [-n 360] [-step 10s] [-template FILE]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/internal/dev/profgen"
)

func main() {
	out := flag.String("out", "", "folder to write the profiles in")
	n := flag.Int("n", 360, "how many profiles")
	step := flag.Duration("step", 10*time.Second, "time between profiles")
	template := flag.String("template", "testdata/profiles/node_exporter_heap_4types.pb.gz", "the real heap profile to start from")
	flag.Parse()
	if *out == "" {
		log.Fatal("gen: -out DIR is required")
	}
	tp, err := pprofio.Default.ReadFile(*template)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	start := time.Now().Add(-time.Duration(*n) * *step).Truncate(time.Second)
	err = profgen.Heap(tp, profgen.Series{Start: start, Step: *step, N: *n, LeakPerStep: 256 << 10}, func(i int, p *profile.Profile) error {
		f, err := os.Create(filepath.Join(*out, fmt.Sprintf("heap-%04d.pb.gz", i)))
		if err != nil {
			return err
		}
		if err := p.Write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		log.Fatal(err)
	}
}
