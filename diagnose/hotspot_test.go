package diagnose

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// stackSnapshot writes a heap profile whose alloc_space holds the given bytes per stack (leaf
// first, frames separated by ";"), nothing in use, and returns its snapshot.
func stackSnapshot(t *testing.T, dir string, at time.Time, alloc map[string]int64) evidence.Snapshot {
	t.Helper()
	rows := map[string][2]int64{}
	for stack, v := range alloc {
		rows[stack] = [2]int64{v, 0}
	}
	return profileSnapshot(t, dir, at, rows)
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
		ev := readAllEvidence(t, "example.com/svc.(*uploads)", 20*time.Second, 1600, 0.05)
		sum := Summary{GCPerSecond: tc.gcPerSecond, GCCPUFraction: 0.025, GCCount: 120}
		in := inputOf(ev)
		in.f.Summary = sum
		out := allocationHotspot(in)
		if len(out.findings) != 1 {
			t.Fatalf("%v GC/s: findings %+v (not judged %+v)", tc.gcPerSecond, out.findings, out.notJudged)
		}
		if f := out.findings[0]; f.Severity != tc.want {
			t.Errorf("%v GC/s: %s, want %s: %s", tc.gcPerSecond, f.Severity, tc.want, f.Title)
		}
	}
}

// A hotspot of large objects can make the GC rare: five cycles in a minute. Its cost is not
// proved until the GC has run ten times, and at that rate that takes another minute, not the
// ten seconds a faster GC would need.
func TestHotspotWatchMoreAtTheGCsRate(t *testing.T) {
	ev := readAllEvidence(t, "example.com/svc.(*chunks)", 60*time.Second, 3000, 0.5)
	in := inputOf(ev)
	in.f.Summary = Summary{GCPerSecond: 5.0 / 60, GCCPUFraction: 0.05, GCCount: 5}
	out := allocationHotspot(in)
	if len(out.findings) != 1 {
		t.Fatalf("findings %+v (not judged %+v)", out.findings, out.notJudged)
	}
	if f := out.findings[0]; f.Confidence != Suspected || f.WatchMoreSeconds < 55 {
		t.Errorf("%s, watch %.0fs more: want suspected until five more cycles, about 60 s", f.Confidence, f.WatchMoreSeconds)
	}
}

// readAllEvidence is a window of span between two allocation profiles in which typ's handle
// method allocated allocMiB through io.ReadAll and its count method 30 MiB, with the GC's CPU
// read three times, gcCPU seconds more each time.
func readAllEvidence(t *testing.T, typ string, span time.Duration, allocMiB int64, gcCPU float64) *evidence.Evidence {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ev := evidence.New("watch", evidence.Target{}, evidence.Options{})
	const mib = 1 << 20
	for i, at := range []time.Time{t0, t0.Add(span)} {
		ev.AddSnapshot(stackSnapshot(t, dir, at, map[string]int64{
			"io.ReadAll;" + typ + ".handle": int64(i) * allocMiB * mib,
			typ + ".count":                  int64(i)*30*mib + 1,
		}))
	}
	for i := range 3 {
		ev.GCCPU.Points = append(ev.GCCPU.Points, evidence.Point{T: t0.Add(time.Duration(i) * span / 2), V: float64(i) * gcCPU})
	}
	ev.Finish(evidence.Options{})
	return ev
}
