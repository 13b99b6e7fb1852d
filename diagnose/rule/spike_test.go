package rule

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// TestSpikeReadAfterABurst: json-whole's heap profiles, one every 10 s on a loaded machine
// (recorded). Each reading is one GC's live heap; the window opens inside bursts (64.6, 56.5,
// then 80.2 MiB) before the heap comes back to 12 MiB. The 80.2 MiB burst rose from the floor
// the heap comes back to, not from the burst read before it: a spike of 56 MiB over a floor
// of 24, a warning.
func TestSpikeReadAfterABurst(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 33, 39, 0, time.UTC)
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	live := evidence.NewGauge(evidence.SourceHeapProfile, 0)
	for _, r := range []struct{ at, mib float64 }{{1.25, 64.6}, {10, 56.5}, {20, 80.2}, {30, 12.0}, {50, 41.1}} {
		live.Add(t0.Add(time.Duration(r.at*float64(time.Second))), r.mib*(1<<20))
	}
	ev.Live = live.Series()
	ev.Finish(evidence.Options{})
	ev.Start, ev.End = t0, t0.Add(60*time.Second)
	out := judgeKind(ev, KindTransientSpike)
	if len(out.verdicts) != 1 || out.verdicts[0].Severity != Warning {
		t.Fatalf("want a transient-spike warning, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
	}
	if h := out.verdicts[0].Case.(*SpikeCase).Peak.Height(); h < 50<<20 {
		t.Errorf("the largest spike is %.1f MiB high, want the 80.2 MiB burst above the floor (about 56)", h/(1<<20))
	}
}
