package diagnose

import (
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/source/pprofdir"
)

// TestProfilesCurledInABurst: profiles taken seconds apart (curl'd by hand from the lab's
// goroutine-leak and tcp-reassembly, testdata/recorded) are too close together for a trend,
// and were "none among what could be judged". Five goroutine profiles over 5.7 s (212 -> 383
// goroutines, 171 more at queryShard) and three heap profiles in 0.9 s (33 -> 42 MiB, 8 MiB
// more at bufferSegment) each get a suspected finding naming the site that grew, how far
// apart to take the next ones, and a snapshot view of the last profile. Three heap profiles
// of the lab's session-sprawl over 4 s (7.5 -> 16.5 MiB, through every profile) grew at six
// sites, none by the 4 MiB that matters (3.5 MiB at most, at the handler): "none" too,
// now suspected under the session middleware those sites share (7.0 MiB over 5 sites).
func TestProfilesCurledInABurst(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		kind    Kind
		culprit string
		view    string
	}{
		{"testdata/recorded/burst-goroutines", KindGoroutineLeak, "lab.(*searchService).queryShard", "goroutine"},
		{"testdata/recorded/burst-heap", KindHeapLeak, "lab.(*assembler).bufferSegment", "heap"},
		{"testdata/recorded/burst-spread", KindHeapLeak, "lab.(*sessionMiddleware).ServeHTTP", "heap"},
	} {
		ev, err := pprofdir.Load([]string{tc.dir}, pprofdir.Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := Diagnose(ev, Options{})
		var f *Finding
		for i := range d.Findings {
			if d.Findings[i].Kind == tc.kind {
				f = &d.Findings[i]
			}
		}
		if f == nil {
			t.Errorf("%s: no %s finding: %+v", tc.dir, tc.kind, d.NotJudged)
			continue
		}
		if f.Confidence != Suspected || f.WatchMoreSeconds <= 0 || len(f.Culprits) == 0 || !strings.HasSuffix(f.Culprits[0].Function, tc.culprit) {
			t.Errorf("%s: %s %s, watch %.0fs more, culprits %+v", tc.dir, f.Confidence, f.Title, f.WatchMoreSeconds, f.Culprits)
		}
		if !strings.Contains(f.Detail, "apart or more") {
			t.Errorf("%s: the detail does not say how far apart to take the next ones: %s", tc.dir, f.Detail)
		}
		var viewed bool
		for _, v := range d.Snapshots {
			viewed = viewed || v.Kind == tc.view && v.Of > 1
		}
		if !viewed {
			t.Errorf("%s: no snapshot view of the last %s profile: %+v", tc.dir, tc.view, d.Snapshots)
		}
	}
}
