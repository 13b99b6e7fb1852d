package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// readAllFacts is a window of span between two allocation profiles in which typ's handle
// method allocated allocMiB through io.ReadAll and its count method 30 MiB, the GC having
// run gcPerSecond times a second and used gcCPU of the process's CPU.
func readAllFacts(typ string, span time.Duration, allocMiB int64, gcPerSecond, gcCPU float64, cycles uint64) *facts.Facts {
	const mib = 1 << 20
	handle, count := typ+".handle", typ+".count"
	space := &facts.SiteDiff{Unit: "bytes", Growth: (allocMiB + 30) * mib, ByFunction: []facts.SiteDelta{
		{Site: facts.Site{Function: handle, Own: true}, Delta: allocMiB * mib, Stack: []string{"io.ReadAll", handle}},
		{Site: facts.Site{Function: count, Own: true}, Delta: 30 * mib, Stack: []string{count}},
	}}
	old, new := facts.Snapshot{Kind: "heap", T: t0, Path: "old.pb.gz"}, facts.Snapshot{Kind: "heap", T: t0.Add(span), Path: "new.pb.gz"}
	return &facts.Facts{
		Start: t0, End: t0.Add(span),
		Summary:       facts.Summary{GCPerSecond: gcPerSecond, GCCPUFraction: gcCPU, GCCount: cycles},
		GCCycles:      facts.Series{Points: []facts.Point{{T: t0}, {T: t0.Add(span), V: float64(cycles)}}},
		GC:            facts.GC{CPUKnown: true, Cores: 0.0025},
		PeriodicHeaps: []facts.Snapshot{old, new},
		Heaps:         []facts.Snapshot{old, new},
		Alloc: facts.Alloc{Pair: true, Old: old, New: new, Space: space,
			Patterns: map[string][]facts.Pattern{handle: {{Name: facts.PatternReadAll}}}},
	}
}

// A handler reads whole 8 MiB bodies with io.ReadAll: 98% of what the program allocates. The
// GC's CPU is modest (2.5%: decompressing costs more than collecting), but that one site makes
// the GC run six times a second: a known anti-pattern driving the GC that often is worth a
// warning. At one GC a second the same site and share is information.
func TestHotspotThatDrivesTheGC(t *testing.T) {
	for _, tc := range []struct {
		gcPerSecond float64
		want        Severity
	}{
		{6, Warning},
		{1, Info},
	} {
		fs := readAllFacts("example.com/svc.(*uploads)", 20*time.Second, 1600, tc.gcPerSecond, 0.025, 120)
		out := allocationHotspot(fs, &Default)
		if len(out.verdicts) != 1 {
			t.Fatalf("%v GC/s: verdicts %+v (not judged %+v)", tc.gcPerSecond, out.verdicts, out.unjudged)
		}
		if v := out.verdicts[0]; v.Severity != tc.want {
			t.Errorf("%v GC/s: %s, want %s", tc.gcPerSecond, v.Severity, tc.want)
		}
	}
}

// A hotspot of large objects can make the GC rare: five cycles in a minute. Its cost is not
// proved until the GC has run ten times, and at that rate that takes another minute, not the
// ten seconds a faster GC would need.
func TestHotspotWatchMoreAtTheGCsRate(t *testing.T) {
	fs := readAllFacts("example.com/svc.(*chunks)", 60*time.Second, 3000, 5.0/60, 0.05, 5)
	out := allocationHotspot(fs, &Default)
	if len(out.verdicts) != 1 {
		t.Fatalf("verdicts %+v (not judged %+v)", out.verdicts, out.unjudged)
	}
	if v := out.verdicts[0]; v.Confidence != Suspected || v.WatchMoreSeconds < 55 {
		t.Errorf("%s, watch %.0fs more: want suspected until five more cycles, about 60 s", v.Confidence, v.WatchMoreSeconds)
	}
}
