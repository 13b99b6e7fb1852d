package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
	"github.com/memdoctor/memdoctor/internal/dev/profgen"
)

// BenchmarkAnalyzeFolder360 analyzes a folder of 360 heap profiles (one hour at 10 s), each
// a copy of a real profile of 5,061 samples (node_exporter's) in which one site leaks: the
// whole of memdoctor analyze but starting the process (bench/analyze/run.sh times that too).
func BenchmarkAnalyzeFolder360(b *testing.B) {
	dir := b.TempDir()
	tp, err := pprofio.Default.ReadFile(filepath.Join(realProfiles, "node_exporter_heap_4types.pb.gz"))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	err = profgen.Heap(tp, profgen.Series{Start: start, Step: 10 * time.Second, N: 360, LeakPerStep: 256 << 10}, func(i int, p *profile.Profile) error {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%04d.pb.gz", i)))
		if err != nil {
			return err
		}
		defer f.Close()
		return p.Write(f)
	})
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if err := runAnalyze(context.Background(), testEnv(&out, &out, nil), []string{dir}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if !bytes.Contains(out.Bytes(), []byte("heap-leak")) {
		b.Fatalf("no heap leak found:\n%s", out.String())
	}
}
