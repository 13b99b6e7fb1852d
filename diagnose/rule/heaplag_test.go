package rule

import (
	"fmt"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// TestHeapProfileLag: a heap profile shows the heap as the GC before the last one left it.
// Profiles that repeat their predecessor prove GCs rarer than the fetches, so the last one
// shows a heap from before the previous distinct fetch: a cache warming up for half a minute
// (seen rising until 30 s, unseen since) is only suspected, where a steady rise seen for two
// minutes, or one whose GCs kept up with the fetches, is confirmed.
func TestHeapProfileLag(t *testing.T) {
	for _, tc := range []struct {
		name   string
		every  time.Duration
		inuse  []float64 // MiB per profile; a repeat is a profile no GC refreshed
		want   Confidence
		wantAt time.Duration // the latest time the last reading describes (0: its own)
	}{
		{"warm-up seen for 30 s", 10 * time.Second, []float64{5.3, 28.7, 42, 62.2, 62.2, 86.1, 86.1}, Suspected, 25 * time.Second},
		{"window ends in repeats", 10 * time.Second, []float64{3.7, 19.7, 35.6, 56.2, 56.2, 56.2}, Suspected, 15 * time.Second},
		{"GCs kept up", 10 * time.Second, []float64{6.6, 25.1, 45.1, 83.7, 106.7, 128.8, 154.8}, Confirmed, 0},
		{"steady for two minutes, then repeats", 10 * time.Second,
			[]float64{6.6, 25.1, 45.1, 83.7, 106.7, 128.8, 154.8, 185.3, 229.4, 229.4, 288, 288, 344.6, 344.6, 344.6, 422.2, 422.2, 422.2}, Confirmed, 115 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
			alloc := 0.0
			for i, v := range tc.inuse {
				if i == 0 || v != tc.inuse[i-1] {
					alloc += 2*v + 10 // a GC published a new profile: more was allocated
				}
				at := t0.Add(time.Duration(i) * tc.every)
				addHeap(ev, at, map[string][2]int64{"example.com/svc/cache.render": {int64(alloc * mib), int64(v * mib)}})
			}
			ev.Finish(evidence.Options{})
			if ev.Live.Src != evidence.SourceHeapProfile {
				t.Fatalf("live heap from %v, want heap profiles", ev.Live.Src)
			}
			var wantSeen time.Time
			if tc.wantAt > 0 {
				wantSeen = t0.Add(tc.wantAt)
			}
			if !ev.LiveSeen.Equal(wantSeen) {
				t.Errorf("LiveSeen %v, want %v", ev.LiveSeen, wantSeen)
			}
			out := judgeKind(ev, KindHeapLeak)
			if len(out.verdicts) != 1 {
				t.Fatalf("want one heap-leak verdict, got %+v (unjudged %+v)", out.verdicts, out.unjudged)
			}
			if v := out.verdicts[0]; v.Confidence != tc.want {
				t.Errorf("heap-leak %s, want %s: %+v", v.Confidence, tc.want, v.Case)
			}
		})
	}
}

// TestHeapProfileLagAnyPhase models the runtime: a heap profile fetched at t shows the heap
// the GC before the last one completed before t found live. A cache that fills in 20-25 s
// (GCs further and further apart, the last one 20 s after the one before) is never a
// confirmed leak from its profiles, whenever the fetches fall and however often they come; a
// leak whose GCs keep coming is confirmed at a minute, whenever they fall.
func TestHeapProfileLagAnyPhase(t *testing.T) {
	type gc struct{ at, liveMiB float64 }
	for _, tc := range []struct {
		name string
		gcs  []gc
		leak bool
	}{
		{"cache", []gc{{1, 6}, {2, 13}, {3, 20}, {4, 31}, {7, 47}, {12, 68}, {20, 96}, {40, 122}, {75, 125}}, false},
		{"cache on a busy machine", []gc{{1, 6}, {2, 13}, {3, 20}, {5, 31}, {9, 47}, {15, 68}, {25, 96}, {48, 122}, {80, 125}}, false},
		{"leak", []gc{{1, 5}, {2, 9}, {4, 15}, {6, 22}, {8, 27}, {10, 34}, {14, 47}, {17, 59}, {20, 71}, {24, 86}, {30, 105}, {36, 127}, {44, 155}, {53, 189}, {63, 220}}, true},
	} {
		for _, every := range []float64{5, 10} {
			for _, end := range []float64{45, 60} {
				for phase := 0.0; phase < every; phase += every / 10 {
					v := lagModel(phase, every, end, func(at float64) (live float64, cycles int) {
						for _, g := range tc.gcs { // the GC before the last one completed
							if g.at < at {
								cycles++
							}
						}
						if cycles < 2 {
							return 2, cycles
						}
						return tc.gcs[cycles-2].liveMiB, cycles
					})
					at := fmt.Sprintf("%s, every %.0fs from %.1fs, window %.0fs", tc.name, every, phase, end)
					switch {
					case !tc.leak && v != nil && v.Confidence == Confirmed:
						t.Errorf("%s: a confirmed leak: %+v", at, v.Case)
					case tc.leak && end >= 60 && (v == nil || v.Confidence != Confirmed):
						t.Errorf("%s: the leak is not confirmed: %+v", at, v)
					}
				}
			}
		}
	}
}

// lagModel judges the heap profiles fetched every `every` seconds from `phase` until `end`,
// each showing the live heap (MiB) and the GC cycles state(at) gives.
func lagModel(phase, every, end float64, state func(at float64) (float64, int)) *Verdict {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
	for at := phase; at < end; at += every {
		live, cycles := state(at)
		addHeap(ev, t0.Add(time.Duration(at*float64(time.Second))), map[string][2]int64{
			"example.com/svc/cache.render": {int64((3*live + float64(cycles)) * mib), int64(live * mib)},
		})
	}
	ev.Finish(evidence.Options{})
	ev.Start, ev.End = t0, t0.Add(time.Duration(end)*time.Second)
	out := judgeKind(ev, KindHeapLeak)
	if len(out.verdicts) == 0 {
		return nil
	}
	return &out.verdicts[0]
}

// TestCameBack: gzip-readall recorded through its agent on a loaded machine, one reading a
// second. The live heap is whatever bodies were in flight at the GC (5.5, 12.7, 17.1 or 25.1
// MiB); as the machine falls behind, more are, and the lows of each slice of the window rise
// 5 -> 9 MiB. It still reaches its old low at 43 s, which a leak's heap cannot: no leak. The
// same readings lifted by a steady leak under them are one.
func TestCameBack(t *testing.T) {
	recorded := []float64{5.1, 17.1, 12.7, 12.7, 5.5, 12.7, 4.7, 5.5, 12.7, 12.7, 12.7, 5.5, 17.1, 12.7, 12.7, 12.7,
		25.1, 5.6, 12.7, 12.7, 25.1, 5.5, 12.8, 5.5, 12.7, 12.7, 5.9, 25.1, 12.7, 12.7, 17.1, 12.8, 12.8, 17.2, 12.8,
		12.8, 17.1, 12.8, 25.1, 17.1, 17.1, 17.1, 17.1, 5.6, 12.8, 17.1}
	for _, tc := range []struct {
		name    string
		leakMiB float64 // added per reading
		want    Confidence
	}{
		{"in flight, drifting up", 0, ""},
		{"a leak under it", 0.5, Confirmed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			ev := evidence.New("watch", evidence.Target{}, evidence.Options{})
			live := evidence.NewGauge(evidence.SourceRuntimeMetrics, 0)
			for i, v := range recorded {
				live.Add(t0.Add(time.Duration(i)*time.Second), (v+tc.leakMiB*float64(i))*mib)
			}
			ev.Live = live.Series()
			ev.Finish(evidence.Options{})
			ev.Start, ev.End = t0, t0.Add(45*time.Second)
			out := judgeKind(ev, KindHeapLeak)
			var got Confidence
			if len(out.verdicts) > 0 {
				got = out.verdicts[0].Confidence
			}
			if got != tc.want {
				t.Errorf("heap-leak %q, want %q: %+v", got, tc.want, out.verdicts)
			}
		})
	}
}

// TestInFlightGrowth: six heap profiles whose in-use heap rises 10 -> 19 MiB. When the site
// that grew allocated 300 times what it holds in the meantime (whole request bodies, read at
// one GC of hundreds), the rise is only suspected; when it kept most of what it allocated,
// it is a confirmed leak.
func TestInFlightGrowth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		turnover float64 // MiB allocated per MiB held
		want     Confidence
	}{
		{"bodies in flight", 300, Suspected},
		{"a map that keeps what it gets", 1.2, Confirmed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
			ev := evidence.New("profiles", evidence.Target{}, evidence.Options{})
			alloc := 0.0
			for i, v := range []float64{9.8, 11.9, 12.3, 15.0, 15.4, 18.6} {
				alloc += tc.turnover * 3.5
				addHeap(ev, t0.Add(time.Duration(i)*10*time.Second), map[string][2]int64{
					"example.com/svc/upload.(*Handler).read": {int64(alloc * mib), int64((v - 4) * mib)},
					"example.com/svc/config.load":            {4 * mib, 4 * mib},
				})
			}
			ev.Finish(evidence.Options{})
			ev.Start, ev.End = t0, t0.Add(55*time.Second)
			out := judgeKind(ev, KindHeapLeak)
			if len(out.verdicts) != 1 || out.verdicts[0].Confidence != tc.want {
				t.Fatalf("want a %s heap-leak, got %+v", tc.want, out.verdicts)
			}
		})
	}
}
