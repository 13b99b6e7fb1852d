package culprit

import (
	"fmt"
	"testing"
)

// BenchmarkAggregate aggregates the largest shared profile (41k samples).
func BenchmarkAggregate(b *testing.B) {
	p := sharedProfile(b, "loki_alloc_objects_merged_big.pb.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Aggregate(p, "alloc_objects", Options{MainModule: "github.com/grafana/loki"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiff diffs the first and last snapshots of the parca series.
func BenchmarkDiff(b *testing.B) {
	old := testdataProfile(b, "parca_series_first.pb.gz")
	new := testdataProfile(b, "parca_series_last.pb.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Diff(old, new, "alloc_space", Options{MainModule: "github.com/parca-dev/parca"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffLarge diffs two large unrelated profiles.
func BenchmarkDiffLarge(b *testing.B) {
	old := sharedProfile(b, "prometheus_heap_4types.pb.gz")
	new := sharedProfile(b, "loki_heap_4types.pb.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Diff(old, new, "inuse_space", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseGoroutineText parses generated debug=2 dumps streamed from a
// generator: B/op must stay flat as the dump grows.
func BenchmarkParseGoroutineText(b *testing.B) {
	for _, mb := range []int64{5, 50} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			size := mb << 20
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseGoroutineText(newDumpGen(b, size), Options{MainModule: testModule}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
