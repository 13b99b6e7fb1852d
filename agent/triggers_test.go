package agent

import (
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

func testTriggers(cfg triggerConfig) *triggers {
	if cfg.cooldown == 0 {
		cfg.cooldown = 5 * time.Minute
	}
	return newTriggers(cfg, time.Second)
}

var heapCfg = triggerConfig{heapRatio: 0.5, heapBytes: 16 * mib}

// gcs feeds GC points (live MiB, goal = 2 x live) one second apart from t0 and returns the
// firings with the index of the GC that fired them.
func gcs(tr *triggers, lives ...uint64) (fired map[int]firing) {
	fired = map[int]firing{}
	for i, l := range lives {
		p := gcPoint{t: t0.Add(time.Duration(i) * time.Second), cycle: uint64(i + 1), live: l * mib, goal: 2 * l * mib}
		if f, ok := tr.onGC(p); ok {
			fired[i] = f
		}
	}
	return fired
}

func TestHeapJump(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    triggerConfig
		lives  []uint64
		fireAt int // -1 = never
		start  int // the GC index the spike started after
		which  string
	}{
		// The goal (2 x live here, as with GOGC=100) doubles a live jump: 16 -> 32 MiB fires.
		{"doubling spike", heapCfg, []uint64{8, 8, 9, 8, 16, 32, 64, 8}, 4, 3, "goal"},
		{"steady heap", heapCfg, []uint64{40, 42, 41, 43, 40, 42}, -1, 0, ""},
		{"large but below the ratio", heapCfg, []uint64{100, 100, 120, 140}, -1, 0, ""},
		{"large ratio but small bytes", heapCfg, []uint64{4, 4, 6, 8, 4}, -1, 0, ""},
		{"slow ramp within the window", heapCfg, []uint64{20, 24, 28, 32, 36, 40}, 3, 0, "goal"},
		{"off", triggerConfig{heapRatio: 0}, []uint64{8, 200}, -1, 0, ""},
		{"first GC has no baseline", heapCfg, []uint64{500}, -1, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fired := gcs(testTriggers(tc.cfg), tc.lives...)
			if tc.fireAt < 0 {
				if len(fired) > 0 {
					t.Fatalf("fired %v", fired)
				}
				return
			}
			f, ok := fired[tc.fireAt]
			if !ok || len(fired) != 1 {
				t.Fatalf("fired at %v, want only at GC %d", keys(fired), tc.fireAt)
			}
			if f.trigger != TriggerHeapJump || !strings.Contains(f.detail, "heap "+tc.which) {
				t.Errorf("firing %+v", f)
			}
			if want := t0.Add(time.Duration(tc.start) * time.Second); !f.spikeStart.Equal(want) {
				t.Errorf("spike start %v, want GC %d (%v)", f.spikeStart.Sub(t0), tc.start, want.Sub(t0))
			}
			if f.values["heap_live_bytes"] != float64(tc.lives[tc.fireAt]*mib) {
				t.Errorf("values %v", f.values)
			}
		})
	}
}

func keys(m map[int]firing) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestHeapLiveJump: with GOGC=off under a memory limit the goal stays put; the live heap's
// jump fires.
func TestHeapLiveJump(t *testing.T) {
	tr := testTriggers(heapCfg)
	var fired []firing
	for i, live := range []uint64{20, 21, 20, 30, 45} {
		if f, ok := tr.onGC(gcPoint{t: t0.Add(time.Duration(i) * time.Second), live: live * mib, goal: 200 * mib}); ok {
			fired = append(fired, f)
		}
	}
	if len(fired) != 1 || !strings.Contains(fired[0].detail, "heap live") || fired[0].values["heap_live_bytes"] != 45*mib {
		t.Fatalf("fired %+v", fired)
	}
	// The rise began after GC 2: GC 3's 30 MiB is above the lowest quarter (20 + 25/4).
	if want := t0.Add(2 * time.Second); !fired[0].spikeStart.Equal(want) {
		t.Errorf("spike start %v, want 2s", fired[0].spikeStart.Sub(t0))
	}
}

// TestHeapGoalJump: under a memory limit the goal can jump (the limit was raised) while the
// live heap does not.
func TestHeapGoalJump(t *testing.T) {
	tr := testTriggers(heapCfg)
	var fired []firing
	for i, goal := range []uint64{40, 40, 40, 100} {
		if f, ok := tr.onGC(gcPoint{t: t0.Add(time.Duration(i) * time.Second), live: 30 * mib, goal: goal * mib}); ok {
			fired = append(fired, f)
		}
	}
	if len(fired) != 1 || !strings.Contains(fired[0].detail, "heap goal") || fired[0].values["baseline_goal_bytes"] != 40*mib {
		t.Fatalf("fired %+v", fired)
	}
}

func TestHeapJumpCooldownAndWindow(t *testing.T) {
	tr := testTriggers(triggerConfig{heapRatio: 0.5, heapBytes: 16 * mib, cooldown: 10 * time.Second})
	at := func(sec int, live uint64) bool {
		_, ok := tr.onGC(gcPoint{t: t0.Add(time.Duration(sec) * time.Second), live: live * mib, goal: 2 * live * mib})
		return ok
	}
	if at(0, 10) || !at(1, 100) {
		t.Fatal("the first jump did not fire")
	}
	if at(2, 10) || at(3, 200) {
		t.Error("a second jump fired within the cooldown")
	}
	if !at(12, 300) {
		t.Error("a jump after the cooldown did not fire")
	}
	// A baseline older than the window no longer counts: 300 MiB for a minute is the norm.
	if at(80, 300) || at(100, 310) {
		t.Error("fired against a baseline older than the window")
	}
}

func TestHeapJumpRingBound(t *testing.T) {
	tr := testTriggers(heapCfg)
	for i := range 1000 { // far more GCs than the ring holds, within one window
		tr.onGC(gcPoint{t: t0.Add(time.Duration(i) * time.Millisecond), live: 50 * mib, goal: 100 * mib})
	}
	if tr.gcN != len(tr.gcs) {
		t.Errorf("holds %d points", tr.gcN)
	}
}

func samples(tr *triggers, pts ...procPoint) map[int][]firing {
	out := map[int][]firing{}
	for i, p := range pts {
		p.t = t0.Add(time.Duration(i) * time.Second)
		if f := tr.onSample(p); len(f) > 0 {
			out[i] = f
		}
	}
	return out
}

func TestGoroutineGrowth(t *testing.T) {
	cfg := triggerConfig{goroutineN: 1000, goroutineRatio: 0.5}
	fired := samples(testTriggers(cfg),
		procPoint{goroutines: 2000}, procPoint{goroutines: 2100}, procPoint{goroutines: 2050},
		procPoint{goroutines: 2600}, procPoint{goroutines: 3200}, procPoint{goroutines: 4000})
	if len(fired) != 1 || len(fired[4]) != 1 {
		t.Fatalf("fired %v, want once at sample 4 (+1200, +60%%)", fired)
	}
	f := fired[4][0]
	if f.trigger != TriggerGoroutines || f.values["baseline_goroutines_count"] != 2000 {
		t.Errorf("firing %+v", f)
	}
	if want := t0.Add(2 * time.Second); !f.spikeStart.Equal(want) { // 2050 <= 2000 + 1200/4 < 2600
		t.Errorf("spike start %v, want 2s", f.spikeStart.Sub(t0))
	}
	// +1500 but only +15%: a big service growing a little is not a leak signal.
	if fired := samples(testTriggers(cfg), procPoint{goroutines: 10000}, procPoint{goroutines: 11500}); len(fired) > 0 {
		t.Errorf("fired %v", fired)
	}
	if fired := samples(testTriggers(triggerConfig{}), procPoint{goroutines: 1}, procPoint{goroutines: 100000}); len(fired) > 0 {
		t.Errorf("disabled trigger fired %v", fired)
	}
}

func TestRSSThreshold(t *testing.T) {
	tr := testTriggers(triggerConfig{rssThreshold: 100 * mib, cooldown: time.Second})
	fired := samples(tr,
		procPoint{rss: 50 * mib}, procPoint{rss: 52 * mib}, procPoint{rss: 60 * mib}, procPoint{rss: 101 * mib}, // fires: crossed
		procPoint{rss: 120 * mib}, // still above: no new firing
		procPoint{rss: 95 * mib},  // below, but not 10% below: not re-armed
		procPoint{rss: 105 * mib}, // no firing
		procPoint{rss: 80 * mib},  // re-armed
		procPoint{rss: 0},         // unknown: ignored
		procPoint{rss: 130 * mib}, // fires again
	)
	if len(fired) != 2 || fired[3] == nil || fired[9] == nil {
		t.Fatalf("fired at %v, want 3 and 9", fired)
	}
	f := fired[3][0]
	if f.trigger != TriggerRSS || f.values["rss_threshold_bytes"] != 100*mib {
		t.Errorf("firing %+v", f)
	}
	if want := t0.Add(2 * time.Second); !f.spikeStart.Equal(want) { // 60 <= 50 + 51/4
		t.Errorf("spike start %v, want 2s", f.spikeStart.Sub(t0))
	}
	if fired := samples(testTriggers(triggerConfig{}), procPoint{rss: 1 << 40}); len(fired) > 0 {
		t.Errorf("off, yet fired %v", fired)
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 16 * mib: "16.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := fmtBytes(n); got != want {
			t.Errorf("fmtBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
