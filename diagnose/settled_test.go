package diagnose

import "testing"

// A watch --until-confirmed stops on a confirmed cause with its culprit at once, whatever kinds
// are not judged yet, unless another finding is still suspected with time to settle it; a
// symptom waits for what could explain it, a cause for its culprit; finding nothing, it stops
// only once nothing is pending and its window could show a slow problem.
func TestSettled(t *testing.T) {
	leak := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed, Culprits: []Culprit{{Function: "example.com/svc.fanOut"}}}
	nameless := Finding{Kind: KindGoroutineLeak, Severity: Critical, Confidence: Confirmed} // one goroutine profile so far
	rss := Finding{Kind: KindMemoryGrowth, Severity: Warning, Confidence: Confirmed}
	heapNotYet := NotJudged{Kind: KindHeapLeak, WatchMoreSeconds: 10}
	heapSuspected := Finding{Kind: KindHeapLeak, Severity: Info, Confidence: Suspected, WatchMoreSeconds: 30}
	heapExplained := Finding{Kind: KindHeapLeak, Severity: Info, Confidence: Suspected} // held by the goroutines: nothing to watch for
	hotspot := Finding{Kind: KindAllocationHotspot, Severity: Info, Confidence: Confirmed}
	later := NotJudged{Kind: KindCostGrowth, WatchMoreSeconds: 9}
	short, long := Window{Seconds: 15}, Window{Seconds: 45}
	for _, tc := range []struct {
		name      string
		d         Diagnosis
		done      bool
		confirmed int
	}{
		{"a confirmed leak, kinds not judged yet", Diagnosis{Window: short, Findings: []Finding{leak}, NotJudged: []NotJudged{later}}, true, 1},
		{"a confirmed leak, another finding suspected", Diagnosis{Window: short, Findings: []Finding{leak, heapSuspected}}, false, 0},
		{"a confirmed leak, a suspicion it explains", Diagnosis{Window: short, Findings: []Finding{leak, heapExplained}}, true, 1},
		{"a confirmed leak whose culprit is not named yet", Diagnosis{Window: short, Findings: []Finding{nameless}}, false, 0},
		{"a confirmed leak whose culprit is not named over the clean window", Diagnosis{Window: long, Findings: []Finding{nameless}}, true, 1},
		{"a symptom, its cause not judged yet", Diagnosis{Window: short, Findings: []Finding{rss}, NotJudged: []NotJudged{heapNotYet}}, false, 0},
		{"a symptom, everything judged", Diagnosis{Window: short, Findings: []Finding{rss}}, true, 1},
		{"a symptom and its cause", Diagnosis{Window: short, Findings: []Finding{leak, rss}, NotJudged: []NotJudged{later}}, true, 2},
		{"confirmed at info only: no problem, too short", Diagnosis{Window: short, Findings: []Finding{hotspot}}, false, 0},
		{"confirmed at info only: no problem", Diagnosis{Window: long, Findings: []Finding{hotspot}}, true, 0},
		{"nothing found, too short", Diagnosis{Window: short}, false, 0},
		{"nothing found, a kind not judged yet", Diagnosis{Window: long, NotJudged: []NotJudged{later}}, false, 0},
		{"nothing found, a suspicion", Diagnosis{Window: long, Findings: []Finding{heapExplained}}, false, 0},
		{"nothing found", Diagnosis{Window: long}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.d.Settled()
			if st.Done != tc.done || st.Confirmed != tc.confirmed || st.Done != (st.Why != "") {
				t.Errorf("Settled() = %+v; want done %v with %d confirmed", st, tc.done, tc.confirmed)
			}
		})
	}
}
