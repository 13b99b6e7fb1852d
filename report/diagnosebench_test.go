package report

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// BenchmarkDiagnose24h measures loading and diagnosing a synthetic 24-hour session sampled
// every second (86,401 samples, a GC every 2 s, snapshots every 10 minutes): what
// `memdoctor analyze` and `memdoctor report` pay before they print.
//
//	go test ./report -run '^$' -bench Diagnose24h -benchtime 3x
func BenchmarkDiagnose24h(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s")
	synthSession(b, dir, synthSpec{start: time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), duration: 24 * time.Hour,
		sample: time.Second, gcEvery: 2 * time.Second, spikeEvery: 15 * time.Minute, profileEvery: 10 * time.Minute})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := session.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if d.Summary.Samples != 86401 {
			b.Fatalf("%d samples", d.Summary.Samples)
		}
	}
}
