package diagnose

import (
	"testing"
	"time"
)

// A watch --until-confirmed stops on a confirmed leak with its culprit at once, whatever kinds
// are not judged yet, unless another finding is still suspected with time to settle it; any
// other problem waits for every kind to be judged, a leak for its culprit and, in a process that
// may be warming up, a heap leak for the clean window; finding nothing, it stops only once
// nothing is pending and its window could show a slow problem.
func TestSettled(t *testing.T) {
	leak := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.fanOut", Share: 0.98}}}
	tie := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.handleStock", Share: 0.5}, {Function: "example.com/svc.(*client).send", Share: 0.5}}}
	beside := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.(*loadGen).work", Share: 0.05}}}
	nameless := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed} // one goroutine profile so far
	rss := Finding{Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed}
	spike := Finding{Kind: KindTransientSpike, Severity: Warning, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.(*Import).readAll", Share: 0.8}}}
	heapNotYet := NotJudged{Kind: KindHeapLeak, WatchMoreSeconds: 10}
	heapSuspected := Finding{Kind: KindHeapLeak, Severity: Info, Confidence: Suspected, WatchMoreSeconds: 30}
	heapExplained := Finding{Kind: KindHeapLeak, Severity: Info, Confidence: Suspected} // held by the goroutines: nothing to watch for
	hotspot := Finding{Kind: KindAllocationHotspot, Severity: Info, Confidence: Confirmed}
	hotspotSuspected := Finding{Kind: KindAllocationHotspot, Severity: Info, Confidence: Suspected, WatchMoreSeconds: 77} // waits for ten GC cycles
	later := NotJudged{Kind: KindCostGrowth, WatchMoreSeconds: 9}
	t0 := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	short, long := Window{Start: t0, Seconds: 15}, Window{Start: t0, Seconds: 45}
	old, young := t0.Add(-10*time.Minute), t0.Add(-5*time.Second)
	heapLeak := Finding{Kind: KindHeapLeak, Severity: Warning, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.(*Store).add", Share: 0.9}}}
	proved := Finding{Kind: KindGoroutineLeak, Severity: Warning, Confidence: Confirmed, Culprits: leak.Culprits, Evidence: map[string]float64{"leaked_goroutines_count": 150}}
	for _, tc := range []struct {
		name      string
		d         Diagnosis
		started   time.Time // the process's start; old unless set
		done      bool
		confirmed int
	}{
		{"a confirmed leak, kinds not judged yet", Diagnosis{Window: short, Findings: []Finding{leak}, NotJudged: []NotJudged{later}}, old, true, 1},
		{"a confirmed leak, another leak suspected", Diagnosis{Window: short, Findings: []Finding{leak, heapSuspected}}, old, false, 0},
		{"a confirmed leak, a hotspot suspected", Diagnosis{Window: short, Findings: []Finding{heapLeak, hotspotSuspected}}, old, true, 1},
		{"a spike, a hotspot suspected", Diagnosis{Window: long, Findings: []Finding{spike, hotspotSuspected}}, old, false, 0},
		{"a confirmed leak, a suspicion it explains", Diagnosis{Window: short, Findings: []Finding{leak, heapExplained}}, old, true, 1},
		{"a confirmed leak whose culprit is not named yet", Diagnosis{Window: short, Findings: []Finding{nameless}}, old, false, 0},
		{"a confirmed leak whose first culprit holds 5% of it", Diagnosis{Window: short, Findings: []Finding{beside}}, old, false, 0},
		{"a confirmed leak whose first two culprits hold half of it each", Diagnosis{Window: short, Findings: []Finding{tie}}, old, false, 0},
		{"a confirmed leak whose culprit is not named over the clean window", Diagnosis{Window: long, Findings: []Finding{nameless}}, old, true, 1},
		{"a symptom, its cause not judged yet", Diagnosis{Window: short, Findings: []Finding{rss}, NotJudged: []NotJudged{heapNotYet}}, old, false, 0},
		{"a symptom, everything judged", Diagnosis{Window: short, Findings: []Finding{rss}}, old, true, 1},
		{"a symptom and its cause", Diagnosis{Window: short, Findings: []Finding{leak, rss}, NotJudged: []NotJudged{later}}, old, true, 2},
		{"confirmed at info only: no problem, too short", Diagnosis{Window: short, Findings: []Finding{hotspot}}, old, false, 0},
		{"confirmed at info only: no problem", Diagnosis{Window: long, Findings: []Finding{hotspot}}, old, true, 0},
		{"nothing found, too short", Diagnosis{Window: short}, old, false, 0},
		{"nothing found, a kind not judged yet", Diagnosis{Window: long, NotJudged: []NotJudged{later}}, old, false, 0},
		{"nothing found, a suspicion", Diagnosis{Window: long, Findings: []Finding{heapExplained}}, old, false, 0},
		{"nothing found", Diagnosis{Window: long}, old, true, 0},
		{"a heap leak in a process that may be warming up", Diagnosis{Window: short, Findings: []Finding{heapLeak}}, young, false, 0},
		{"a heap leak in a process of unknown age", Diagnosis{Window: short, Findings: []Finding{heapLeak}}, time.Time{}, false, 0},
		{"a heap leak in a process that may be warming up, over the clean window", Diagnosis{Window: long, Findings: []Finding{heapLeak}}, young, true, 1},
		{"a heap leak in a process that may be warming up, over the clean window, a kind not judged yet", Diagnosis{Window: long, Findings: []Finding{heapLeak}, NotJudged: []NotJudged{later}}, young, false, 0},
		{"a heap leak in a process past its start", Diagnosis{Window: short, Findings: []Finding{heapLeak}}, old, true, 1},
		{"a leak the runtime proved, in a young process", Diagnosis{Window: short, Findings: []Finding{proved}}, young, true, 1},
		{"a spike, a leak not judged yet", Diagnosis{Window: short, Findings: []Finding{spike}, NotJudged: []NotJudged{heapNotYet}}, old, false, 0},
		{"a spike, another kind not judged yet", Diagnosis{Window: short, Findings: []Finding{spike}, NotJudged: []NotJudged{later}}, old, false, 0},
		{"a spike, everything judged", Diagnosis{Window: short, Findings: []Finding{spike}}, old, true, 1},
		{"resident memory's growth in a young process", Diagnosis{Window: short, Findings: []Finding{rss}}, young, false, 0},
		{"a goroutine count's growth in a young process", Diagnosis{Window: short, Findings: []Finding{leak}}, young, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.d.Settled(tc.started)
			if st.Done != tc.done || st.Confirmed != tc.confirmed || st.Done != (st.Why != "") {
				t.Errorf("Settled() = %+v; want done %v with %d confirmed", st, tc.done, tc.confirmed)
			}
		})
	}
}
