package diagnose

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// In memory: evidence built by hand, diagnosed (facts, rules and words).

// Resident memory that rose fourteen times in the first seconds (a proxy buffering request
// bodies whole) and stayed: it no longer rises, so it is no growth for good, but the process
// now needs a GiB; a cache that warmed from 20 to 150 MiB is not worth a word.
func TestMemoryStep(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		from, to  float64
		wantFound bool
	}{
		{"a GiB buffered", 75, 1033, true},
		{"a cache warmed", 20, 150, false},
		{"a large heap grew a little", 900, 1300, false},
	} {
		ev := &evidence.Evidence{Start: t0, End: t0.Add(60 * time.Second)}
		for s := range 60 {
			v := tc.to
			if s < 4 {
				v = tc.from + (tc.to-tc.from)*float64(s)/4
			}
			ev.RSS.Points = append(ev.RSS.Points, evidence.Point{T: t0.Add(time.Duration(s) * time.Second), V: v * mib, Src: evidence.SourceProc})
		}
		ev.RSS.Src = evidence.SourceProc
		out := judgeKind(ev, KindMemoryGrowth)
		if found := len(out.findings) == 1 && out.findings[0].Severity == Warning; found != tc.wantFound {
			t.Errorf("%s: findings %+v, want a warning: %v", tc.name, out.findings, tc.wantFound)
		}
	}
}
