package diagnose

import (
	"strings"
	"testing"
	"time"
)

// TestRetentionFromItsOnset: the lab's madvfree-retention (a batch of 350 MiB every 15 s,
// freed with debug.FreeOSMemory under GODEBUG=madvdontneed=0), recorded (testdata/recorded):
//   - run beside three other scenarios on two cores: the start-up and the first batch took
//     20 s, and MemStats was read once a snapshot (7 splits in 45 s), so the LazyFree showed
//     in 3 of 7 splits, all of those after it, and the retention was not told at all;
//   - watch-memory alone: the window's last split (59.1 s) fell in a batch's FreeOSMemory, the
//     pages freed by its GC and not yet released (264 MiB free heap, 86 MiB LazyFree), and the
//     retention read as free heap kept between spikes (info) from that one split, though the
//     58 splits before it showed 350 MiB of LazyFree.
//
// Both are runtime retention at warning, told as MADV_FREE pages.
func TestRetentionFromItsOnset(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		until time.Duration
	}{
		{"testdata/recorded/madvfree-retention-busy-run", 45 * time.Second},
		{"testdata/recorded/madvfree-retention-busy-run", 60 * time.Second},
		{"testdata/recorded/madvfree-retention-watch-memory", 45 * time.Second},
		{"testdata/recorded/madvfree-retention-watch-memory", 60 * time.Second},
	} {
		d := diagnoseFirst(t, tc.dir, tc.until)
		var f *Finding
		for i := range d.Findings {
			if d.Findings[i].Kind == KindRuntimeRetention {
				f = &d.Findings[i]
			}
		}
		switch {
		case f == nil:
			t.Errorf("%s at %v: no runtime-retention", tc.dir, tc.until)
		case f.Severity != Warning || !strings.Contains(f.Title, "MADV_FREE"):
			t.Errorf("%s at %v: runtime-retention %s: %s; want a warning about MADV_FREE pages", tc.dir, tc.until, f.Severity, f.Title)
		default:
			t.Logf("%s at %v: %s %s: %s", tc.dir, tc.until, f.Severity, f.Confidence, f.Title)
		}
	}
}
