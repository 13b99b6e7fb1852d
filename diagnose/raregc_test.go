package diagnose

import (
	"testing"
	"time"
)

// TestLeakMakesTheGCRare: the lab's rare-gc-leak watched through its agent (recorded,
// testdata/recorded), judged at 45 s. The gateway keeps 1.5 MiB/s of sessions and allocates
// little else, so under GOGC the GC waits for the heap to double: its last cycle measured the
// live heap 12 s before the window's end (4 -> 46 MiB over 31 s, tau 1.00 over 7 lows), and
// the leak was "suspected: no GC measured the live heap in the last 12.2s". The heap in use, read every second up to the end, stands where
// the live heap would be had it kept growing: the leak is confirmed. The control, the lab's
// cache-warmup through its agent at 30 and 40 s (a cache filling up to its bound, its last GC
// long before the end too), stays suspected: its heap in use stands below where the live heap
// would be had it kept growing at its rate, so the growth slowed.
func TestLeakMakesTheGCRare(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		until time.Duration
		want  Confidence
	}{
		{"testdata/recorded/rare-gc-leak-watch-agent", 45 * time.Second, Confirmed},
		{"testdata/recorded/cache-warmup-watch-agent", 30 * time.Second, Suspected},
		{"testdata/recorded/cache-warmup-watch-agent", 40 * time.Second, Suspected},
	} {
		d := diagnoseFirst(t, tc.dir, tc.until)
		var got Confidence
		for _, f := range d.Findings {
			if f.Kind == KindHeapLeak {
				got = f.Confidence
				t.Logf("%s at %v: %s %s: %s", tc.dir, tc.until, f.Severity, f.Confidence, f.Title)
			}
		}
		if got != tc.want {
			t.Errorf("%s at %v: heap-leak %q, want %q", tc.dir, tc.until, got, tc.want)
		}
	}
}
