package memread

import (
	"runtime/metrics"
	"testing"
	"time"
)

// TestPauseBucketsAreTheRuntimes checks the pause histogram's bucket bounds against those the
// runtime gives its own /sched/pauses histograms (the same geometry in the target's release).
func TestPauseBucketsAreTheRuntimes(t *testing.T) {
	s := []metrics.Sample{{Name: "/sched/pauses/total/other:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		t.Fatal("this runtime has no /sched/pauses/total/other:seconds histogram")
	}
	b := s[0].Value.Float64Histogram().Buckets
	// b[0] is -Inf (the underflow), b[1:] the lower bounds of the counts, then the overflow's.
	if len(b) != timeHistCounts+3 {
		t.Fatalf("the runtime has %d bucket bounds, want %d", len(b), timeHistCounts+3)
	}
	for i := 0; i <= timeHistCounts; i++ {
		if got, want := PauseBucketLow(i), time.Duration(b[i+1]*1e9+0.5); got != want {
			t.Errorf("bucket %d: lower bound %v, the runtime's %v", i, got, want)
		}
	}
}

func TestPauseHistogramSince(t *testing.T) {
	var before, after PauseHistogram
	before.Counts[10], after.Counts[10] = 3, 5 // two pauses in bucket 10
	after.Counts[40] = 1                       // one in bucket 40
	before.Counts[90], after.Counts[90] = 7, 7 // none new there
	n, longest := after.Since(before)
	if n != 3 || longest != PauseBucketLow(41) {
		t.Errorf("Since = %d pauses, longest %v; want 3, %v", n, longest, PauseBucketLow(41))
	}
	if n, longest := before.Since(before); n != 0 || longest != 0 {
		t.Errorf("nothing new: Since = %d, %v", n, longest)
	}
	after.Overflow = 1
	if _, longest := after.Since(before); longest != PauseBucketLow(timeHistCounts) {
		t.Errorf("an overflow: longest %v, want the histogram's end %v", longest, PauseBucketLow(timeHistCounts))
	}
}
