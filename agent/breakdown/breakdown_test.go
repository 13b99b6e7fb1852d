package breakdown

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

const mib = 1 << 20

// sum adds the rows the way the doc says they add up.
func sum(b *At) int64 {
	var s int64
	for _, r := range b.Rows() {
		if r.Minus {
			s -= int64(r.Bytes)
		} else {
			s += int64(r.Bytes)
		}
	}
	return s
}

func goMem(objects, unused, free, released, stacks, meta uint64) *record.GoMem {
	g := &record.GoMem{Source: "runtime/metrics", HeapObjectsBytes: objects, HeapUnusedBytes: unused,
		HeapFreeBytes: free, HeapReleasedBytes: released, HeapStacksBytes: stacks, MetadataBytes: meta}
	g.TotalBytes = objects + unused + free + released + stacks + meta
	return g
}

func TestCompute(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		proc *record.Proc
		g    *record.GoMem
		live uint64
		want At // the fields checked
	}{{
		// "pprof says 7 MB, docker says 400 MB": the rest is free heap the runtime keeps.
		name: "retained free heap",
		proc: &record.Proc{RSSBytes: 400 * mib, RSSAnonBytes: 390 * mib, RSSFileBytes: 10 * mib},
		g:    goMem(9*mib, 1*mib, 370*mib, 4*mib, 1*mib, 9*mib), live: 7 * mib,
		want: At{LiveHeapBytes: 7 * mib, GarbageBytes: 2 * mib, RetainedFreeBytes: 370 * mib, FileBytes: 10 * mib},
	}, {
		// The runtime released the pages with MADV_FREE; the kernel kept them (LazyFree).
		name: "MADV_FREE",
		proc: &record.Proc{RSSBytes: 208 * mib, RSSAnonBytes: 200 * mib, RSSFileBytes: 8 * mib, LazyFreeBytes: 154 * mib},
		g:    goMem(50*mib, 1*mib, 0, 161*mib, 1*mib, 4*mib), live: 50 * mib,
		want: At{LiveHeapBytes: 50 * mib, ReleasedResidentBytes: 154 * mib, FileBytes: 8 * mib},
	}, {
		// 200 MiB of C.malloc: RssAnon grows, the runtime's figures do not.
		name: "non-Go",
		proc: &record.Proc{RSSBytes: 220 * mib, RSSAnonBytes: 212 * mib, RSSFileBytes: 8 * mib},
		g:    goMem(8*mib, 1*mib, 1*mib, 0, 1*mib, 1*mib), live: 6 * mib,
		want: At{LiveHeapBytes: 6 * mib, GarbageBytes: 2 * mib, NonGoBytes: 200 * mib, FileBytes: 8 * mib},
	}, {
		// A 1 GiB never-touched ballast: counted by Go, not resident.
		name: "ballast",
		proc: &record.Proc{RSSBytes: 6 * mib, RSSAnonBytes: 4 * mib, RSSFileBytes: 2 * mib},
		g:    goMem(1024*mib, 0, 0, 0, 0, 0), live: 1024 * mib,
		want: At{LiveHeapBytes: 1024 * mib, NotResidentBytes: 1020 * mib, FileBytes: 2 * mib},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := Compute(t0, tc.proc, tc.g, tc.live, "gctrace")
			if got := sum(&b); got != int64(b.RSSBytes) {
				t.Errorf("rows add up to %d MiB, RSS is %d MiB", got/mib, b.RSSBytes/mib)
			}
			w := tc.want
			for name, pair := range map[string][2]uint64{
				"live":     {b.LiveHeapBytes, w.LiveHeapBytes},
				"released": {b.ReleasedResidentBytes, w.ReleasedResidentBytes},
				"non-Go":   {b.NonGoBytes, w.NonGoBytes},
				"files":    {b.FileBytes, w.FileBytes},
			} {
				if pair[0] != pair[1] {
					t.Errorf("%s = %d MiB, want %d MiB", name, pair[0]/mib, pair[1]/mib)
				}
			}
			if w.RetainedFreeBytes != 0 && b.RetainedFreeBytes != w.RetainedFreeBytes {
				t.Errorf("retained = %d MiB, want %d", b.RetainedFreeBytes/mib, w.RetainedFreeBytes/mib)
			}
			if w.NotResidentBytes != 0 && b.NotResidentBytes != w.NotResidentBytes {
				t.Errorf("not resident = %d MiB, want %d", b.NotResidentBytes/mib, w.NotResidentBytes/mib)
			}
		})
	}
}

func TestComputePartial(t *testing.T) {
	t0 := time.Now()
	remote := Compute(t0, nil, goMem(8*mib, 0, 0, 0, 0, 0), 0, "")
	if remote.RSSBytes != 0 || remote.GoSource == "" || remote.NonGoBytes != 0 {
		t.Errorf("remote target: %+v", remote)
	}
	blind := Compute(t0, &record.Proc{RSSBytes: 30 * mib, RSSFileBytes: 5 * mib}, nil, 0, "")
	if blind.GoSource != "" || blind.RSSBytes != 30*mib || blind.FileBytes != 5*mib {
		t.Errorf("no Go reading: %+v", blind)
	}
	// The live estimate never exceeds what the heap holds.
	if b := Compute(t0, nil, goMem(8*mib, 0, 0, 0, 0, 0), 12*mib, "gctrace"); b.LiveHeapBytes != 8*mib || b.GarbageBytes != 0 {
		t.Errorf("live clamped: %+v", b)
	}
	var b At
	b.RSSBytes = 900 * mib
	b.SetLimits(&record.Cgroup{LimitBytes: 1000 * mib, UsageBytes: 950 * mib}, 2000*mib)
	if b.RSSOfCgroupLimit != 0.9 || b.RSSOfBudget != 0.45 || b.CgroupUsageBytes != 950*mib {
		t.Errorf("limits: %+v", b)
	}
}
