package profgen

import (
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/collect/pprofio"
)

// TestHeap: the series is in time order, its leaking site grows by the step's leak, and
// every allocation counter only grows.
func TestHeap(t *testing.T) {
	tp, err := pprofio.Default.ReadFile("../../../testdata/profiles/node_exporter_heap_4types.pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var inuse, alloc []int64
	var times []int64
	err = Heap(tp, Series{Start: start, Step: 10 * time.Second, N: 5, LeakPerStep: 1 << 20}, func(i int, p *profile.Profile) error {
		var in, al int64
		for _, s := range p.Sample {
			in += s.Value[3]
			al += s.Value[1]
		}
		inuse, alloc, times = append(inuse, in), append(alloc, al), append(times, p.TimeNanos)
		return p.CheckValid()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 5; i++ {
		if times[i]-times[i-1] != int64(10*time.Second) || alloc[i] <= alloc[i-1] {
			t.Errorf("profile %d: time step %d, alloc %d after %d", i, times[i]-times[i-1], alloc[i], alloc[i-1])
		}
	}
	if grew := inuse[4] - inuse[0]; grew < 3<<20 || grew > 5<<20 {
		t.Errorf("in use grew %d bytes over 4 steps of a 1 MiB leak (the others wobble by 5%%)", grew)
	}
}
