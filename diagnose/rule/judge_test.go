package rule

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
)

// TestJudgeGrowth: effect size, consistency and enough data, together. A large monotone
// climb over few readings is a finding; a small drift over many is not; a warm-up that levels
// off is not; a short or noisy series is at most suspected, with how long to watch.
func TestJudgeGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	goroutines := Limits{MinAbs: 30, MinRel: 0.3, MinSpan: 10 * time.Second}
	heap := Limits{MinAbs: 4 << 20, MinRel: 0.1, MinSpan: 20 * time.Second}
	for _, tc := range []struct {
		name      string
		pts       []evidence.Point
		lim       Limits
		quantum   float64
		want      Confidence
		judged    bool
		watchMore bool // a suspected or unjudged verdict says how long to watch
	}{
		// The reports that started the redesign: seven readings 10 s apart, perfectly linear.
		{"goroutines 63->1863 in 7 readings", series(7, 10*time.Second, func(i int) float64 { return 63 + 300*float64(i) }), goroutines, 1, Confirmed, true, false},
		{"goroutines 126->5406 in 5 readings", series(5, 10*time.Second, func(i int) float64 { return 126 + 1320*float64(i) }), goroutines, 1, Confirmed, true, false},
		{"four readings are suspected at most", series(4, 10*time.Second, func(i int) float64 { return 100 + 1000*float64(i) }), goroutines, 1, Suspected, true, true},
		{"two readings cannot be judged", series(2, 10*time.Second, func(i int) float64 { return 100 + 1000*float64(i) }), goroutines, 1, "", false, true},
		{"too short a span", series(10, time.Second, func(i int) float64 { return float64(i << 22) }), heap, 1 << 20, "", false, true},
		// 2% over an hour of readings: consistent, but too small to matter.
		{"small drift over many", series(720, 5*time.Second, func(i int) float64 { return 100<<20 + float64(i)*2900 + rng.NormFloat64()*(64<<10) }), heap, 0, "", true, false},
		{"noise", series(120, time.Second, func(i int) float64 { return 50<<20 + rng.NormFloat64()*(4<<20) }), heap, 0, "", true, false},
		// A cache that fills for 30 s and then stays: not a leak.
		{"warm-up that levels off", series(60, time.Second, func(i int) float64 { return 10<<20 + float64(min(i, 30))*(4<<20) }), heap, 0, "", true, false},
		// A cache still filling, more slowly, when the window ends: suspected, no more.
		{"warm-up still slowing", series(45, time.Second, func(i int) float64 { return 10<<20 + 150*(1<<20)*(1-math.Exp(-float64(i)/15)) }), heap, 0, Suspected, true, true},
		{"steady leak", series(60, time.Second, func(i int) float64 { return 20<<20 + float64(i)*(1<<20) + rng.NormFloat64()*(256<<10) }), heap, 0, Confirmed, true, false},
		// 1 MiB/min on a 30 MiB heap for a minute: consistent but below the effect that
		// matters; it will matter within minutes, so it is suspected.
		{"slow leak, early", series(60, time.Second, func(i int) float64 { return 30<<20 + float64(i)*(1<<20)/60 }), heap, 0, Suspected, true, true},
		{"slow leak, later", series(180, time.Second, func(i int) float64 { return 30<<20 + float64(i)*(2<<20)/60 }), heap, 0, Confirmed, true, false},
		{"decline", series(60, time.Second, func(i int) float64 { return 100<<20 - float64(i)*(1<<20) }), heap, 0, "", true, false},
		// gctrace truncates to whole MiB: a rise of two quanta is not a finding.
		{"within the quantum", series(60, time.Second, func(i int) float64 { return float64(10+i/30) * (1 << 20) }), Limits{MinAbs: 1, MinSpan: 20 * time.Second}, 1 << 20, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := judgeGrowth(tc.pts, tc.lim, tc.quantum, &Default.Trend)
			if g.conf != tc.want || g.judged != tc.judged {
				t.Errorf("conf %q judged %v, want %q %v (n %d tau %.2f p %.3g late %.2f snr %.1f grew %.3g threshold %.3g)",
					g.conf, g.judged, tc.want, tc.judged, g.n, g.tau, g.p, g.lateRatio, g.snr, g.grew(), g.threshold)
			}
			if (g.watchMore > 0) != tc.watchMore {
				t.Errorf("watchMore = %v, want it set: %v", g.watchMore, tc.watchMore)
			}
			if g.grew() < 0 || g.judged && (g.first < 0 || g.last < 0) {
				t.Errorf("negative sizes: first %v last %v", g.first, g.last)
			}
		})
	}
}

// TestLargeGoroutineBase: a service of 109,000 goroutines leaking 31,000 more over 38 s (the
// lab's subscriber-flood on a loaded machine, memdoctor run, ten readings, every one higher):
// 28% of its start, short of the 30% that a small service's rise must reach, but 10,000 more
// goroutines matter whatever the start (Limits.MaxAbs). It stayed "suspected, watch 1.9 s
// more" before; a rise under 10,000, or a small service's under 30%, is suspected at most, as before.
func TestLargeGoroutineBase(t *testing.T) {
	lim := Default.GoroutineLeak.Limits
	for _, tc := range []struct {
		name string
		pts  []evidence.Point
		want Confidence
	}{
		{"109k -> 140k", series(10, 4*time.Second, func(i int) float64 { return 109590 + 3460*float64(i) }), Confirmed},
		{"109k -> 112k, under the cap", series(10, 4*time.Second, func(i int) float64 { return 109590 + 300*float64(i) }), Suspected},
		{"100 -> 125, under 30%", series(10, 4*time.Second, func(i int) float64 { return 100 + 2.5*float64(i) }), Suspected},
	} {
		g := judgeGrowth(tc.pts, lim, 1, &Default.Trend)
		if g.conf != tc.want {
			t.Errorf("%s: %q, want %q (grew %.0f, threshold %.0f)", tc.name, g.conf, tc.want, g.grew(), g.threshold)
		}
	}
}

// TestFloorIgnoresBursts: bursts of 180 MB every 12 s over a flat 4 MB floor (the upload
// service of issue 8) leave a flat floor: no leak.
func TestFloorIgnoresBursts(t *testing.T) {
	pts := series(500, 100*time.Millisecond, func(i int) float64 {
		phase := i % 120 // 12 s
		if phase < 15 {  // 1.5 s inflating
			return float64(4+phase*26) * (1 << 20)
		}
		return 4 << 20
	})
	fl := facts.Floor(pts)
	if len(fl) < 5 {
		t.Fatalf("floor has %d points", len(fl))
	}
	for _, p := range fl {
		if p.V != 4<<20 {
			t.Errorf("floor point %v at %v, want 4 MiB", p.V, p.T)
		}
	}
	if g := judgeGrowth(fl, Default.HeapLeak.Limits, 1<<20, &Default.Trend); g.conf != "" {
		t.Errorf("bursts read as growth: %+v", g)
	}
	if g := judgeGrowth(pts, Default.HeapLeak.Limits, 1<<20, &Default.Trend); g.conf == Confirmed {
		t.Logf("note: the raw readings alone would read as %s", g.conf)
	}
}

// TestSteadySmallGrowth: a slow goroutine leak (the lab's webhook-leak: about one goroutine
// every two seconds), its count read every second. At 50 s the medians of its first and last
// readings are 23 apart, short of the 30 goroutines that matter, rising at every reading: at
// its rate it reaches them in 13 s, within a third of the 49 s it was seen over, and is
// confirmed; at 30 s (11 apart, 36 s to go) it is suspected. A count that wanders up as much
// is not confirmed.
func TestSteadySmallGrowth(t *testing.T) {
	lim := Default.GoroutineLeak.Limits
	steady := func(secs int) []facts.Point {
		var pts []facts.Point
		for s := range secs {
			pts = append(pts, facts.Point{T: t0.Add(time.Duration(s) * time.Second), V: 31 + math.Floor(0.52*float64(s))})
		}
		return pts
	}
	if g := judgeGrowth(steady(50), lim, 1, &Default.Trend); g.conf != Confirmed {
		t.Errorf("50 s of a steady leak, %v -> %v: %q, want confirmed", g.first, g.last, g.conf)
	}
	if g := judgeGrowth(steady(30), lim, 1, &Default.Trend); g.conf != Suspected || g.watchMore <= 0 {
		t.Errorf("30 s of it, %v -> %v: %q (watch %v), want suspected", g.first, g.last, g.conf, g.watchMore)
	}
	var wander []facts.Point
	for s := range 45 {
		wander = append(wander, facts.Point{T: t0.Add(time.Duration(s) * time.Second), V: 31 + 0.5*float64(s) + []float64{0, 9, -7, 4, -9, 6}[s%6]})
	}
	if g := judgeGrowth(wander, lim, 1, &Default.Trend); g.conf == Confirmed {
		t.Errorf("a count that wanders up by as much: confirmed (tau %.2f, snr %.1f)", g.tau, g.snr)
	}
}
