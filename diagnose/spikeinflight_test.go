package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// TestSpikeOverALeakInFlight: the lab's export-over-leak (recorded, testdata/recorded, its
// first 95 s), a ledger leaking 0.5 MiB/s under a 150 MB CSV rendered whole into a
// bytes.Buffer every 15 s. The GC ran only inside the exports, twice in each, so every
// reading of the live heap held an export's buffer: no spike showed in it, and every heap
// profile showed the export's site holding 144 MB. From the profiles alone the leak was
// found with the export's site its second culprit, 74% of its "growth", and no spike; from
// net/http/pprof, the leak and no spike. At each GC the export's site held no more than it
// had allocated since the GC before: bursts in flight. Both are now named, each with its
// own culprit, and the export's site is no culprit of the leak.
func TestSpikeOverALeakInFlight(t *testing.T) {
	const (
		leak   = "github.com/memdoctor/memdoctor/lab.(*orderLedger).record"
		export = "github.com/memdoctor/memdoctor/lab.(*catalogExport).render"
	)
	for _, dir := range []string{"testdata/recorded/export-over-leak-profiles", "testdata/recorded/export-over-leak-watch-pprof"} {
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := DiagnoseSession(s, evidence.Options{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for kind, culprit := range map[Kind]string{KindHeapLeak: leak, KindTransientSpike: export} {
			var f *Finding
			for i := range d.Findings {
				if d.Findings[i].Kind == kind {
					f = &d.Findings[i]
				}
			}
			if f == nil || f.Severity.Rank() < Warning.Rank() {
				t.Errorf("%s: no %s warning: %+v", dir, kind, d.NotJudged)
				continue
			}
			var names []string
			for _, c := range f.Culprits {
				names = append(names, c.Function)
			}
			t.Logf("%s: %s %s: %s; culprits %v", dir, f.Severity, f.Kind, f.Title, names)
			if len(names) == 0 || names[0] != culprit {
				t.Errorf("%s: %s culprits %v, want %s first", dir, kind, names, culprit)
			}
			if kind == KindHeapLeak && slices.Contains(names, export) {
				t.Errorf("%s: the export's site is a culprit of the leak: %v", dir, names)
			}
			if kind == KindTransientSpike && !strings.Contains(f.Detail, "in flight") {
				t.Errorf("%s: the spike's detail does not say its bursts were in flight at every GC: %s", dir, f.Detail)
			}
		}
	}
}
