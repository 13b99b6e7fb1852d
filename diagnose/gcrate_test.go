package diagnose

import (
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// In memory: evidence built by hand, diagnosed (facts, rules and words).

// A GC running 8 times a second whose CPU time no source measured (Prometheus's default
// metrics): a suspected gc-overhead with the pacer's advice, never a confirmed warning; at a
// calm rate, nothing.
func TestGCRateWithoutCPU(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	build := func(perSecond float64) *evidence.Evidence {
		ev := evidence.New("prometheus", evidence.Target{}, evidence.Options{})
		cycles, alloc := evidence.NewCounter(evidence.SourceMemStats), evidence.NewCounter(evidence.SourceMemStats)
		live, rss := evidence.NewGauge(evidence.SourceMemStats, 0), evidence.NewGauge(evidence.SourceProc, 0)
		for i := 0; i <= 240; i++ { // one hour at 15 s
			at := t0.Add(time.Duration(i) * 15 * time.Second)
			cycles.Add(at, perSecond*15*float64(i))
			alloc.Add(at, perSecond*40e6*15*float64(i)) // 40 MB per cycle: a 20 MB heap at GOGC=100
			live.Add(at, 20e6)
			rss.Add(at, 80e6)
		}
		ev.GCCycles, ev.AllocBytes, ev.Live, ev.RSS = cycles.Series(), alloc.Series(), live.Series(), rss.Series()
		ev.Pacer.GOGC = 100
		ev.Gap(evidence.GapGCCPU, "the default Go metrics carry no GC CPU time")
		ev.Finish(evidence.Options{})
		return ev
	}
	d := Diagnose(build(8), Options{})
	var got *Finding
	for i := range d.Findings {
		if d.Findings[i].Kind == KindGCOverhead {
			got = &d.Findings[i]
		}
	}
	if got == nil {
		t.Fatalf("no gc-overhead finding at 8 GC/s: %+v (not judged: %+v)", d.Findings, d.NotJudged)
	}
	if got.Confidence != Suspected || got.Severity != Info {
		t.Errorf("gc-overhead is %s/%s, want suspected/info: the GC's CPU was never measured", got.Confidence, got.Severity)
	}
	if got.AdviceEnv["GOGC"] == "" || got.Evidence["gc_per_second"] < 7.9 {
		t.Errorf("want the pacer's GOGC advice and the measured rate: %+v", got)
	}
	for _, f := range Diagnose(build(0.5), Options{}).Findings {
		if f.Kind == KindGCOverhead {
			t.Errorf("gc-overhead at 0.5 GC/s: %+v", f)
		}
	}
}
