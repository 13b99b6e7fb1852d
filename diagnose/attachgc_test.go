package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// TestAttachedLeakAwaitsGC: `watch --until-confirmed --interval 5s` attached to the lab's
// span-queue-leak a minute after its start (recorded, testdata/recorded), its heap climbing
// 0.7 MB/s and its own GC 12-20 s apart. Before the fix (-old, a watch that stopped after
// 33 s), the heap profiles, three within 15 s (one periodic, one a GC asked for), made a
// suspected heap leak "from profiles taken too close together" from 7 s to 16 s that waited on
// nothing: no GC was asked for ten seconds while the live heap's own trend, which settles it,
// waited on its readings. Each look at which the heap in use has climbed past the last reading
// of the live heap by the growth that matters must await a GC. The watch as it is now (a GC
// asked at the first look and one an interval apart after it) has five readings of the live
// heap by 18 s: judged on the first 20 s it confirms the leak at its culprit and settles the
// watch (the process is past diagnose.WarmUp).
func TestAttachedLeakAwaitsGC(t *testing.T) {
	old, err := session.Open("testdata/recorded/span-queue-leak-attached-old")
	if err != nil {
		t.Fatal(err)
	}
	waited := 0
	for w := 7 * time.Second; w <= 16*time.Second; w += time.Second {
		d, _, err := DiagnoseSession(old, evidence.Options{Until: old.Manifest.Start.Add(w)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := findingOfKind(d.Findings, KindHeapLeak)
		if f == nil || f.Confidence != Suspected {
			t.Fatalf("at %v: want the heap leak suspected from the heap profiles, got %+v (not judged %+v)", w, f, d.NotJudged)
		}
		if d.AwaitsGC() != "" {
			waited++
		}
	}
	// The GC asked at 6.4 s was read at 7.4 s: the heap in use is 4 MiB past it from 9 s on.
	if waited < 8 {
		t.Errorf("the suspected heap leak awaited a GC at %d of the 10 looks from 7 to 16 s: want at least 8", waited)
	}

	s, err := session.Open("testdata/recorded/span-queue-leak-attached")
	if err != nil {
		t.Fatal(err)
	}
	d, ev, err := DiagnoseSession(s, evidence.Options{Until: s.Manifest.Start.Add(20 * time.Second)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := findingOfKind(d.Findings, KindHeapLeak)
	if f == nil || f.Confidence != Confirmed || f.Severity.Rank() < Warning.Rank() || len(f.Culprits) == 0 ||
		!strings.HasSuffix(f.Culprits[0].Function, "lab.(*spanExporter).record") {
		t.Fatalf("judged on its first 20 s: want the heap leak confirmed at (*spanExporter).record, got %+v", f)
	}
	if st := d.Settled(ev.Target.Started); !st.Done {
		t.Errorf("judged on its first 20 s, the watch is not settled: %+v", st)
	}
}
