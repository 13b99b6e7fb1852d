package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// webhookProfiles is the lab's webhook-leak (issue 30, family 5: a delivery goroutine per
// event blocked for ever on an unbuffered send, one every two seconds on a service of ten)
// as its heap and goroutine profiles alone show it (the accuracy matrix's profiles vantage,
// recorded 2026-12-03 on a quiet machine): goroutine profiles at 1.3, 10, 30, 50 and 65 s,
// counting 19, 27, 39, 50 and 57, the growth all at one site,
// lab.(*notifier).deliver, 0 -> 5 -> 17 -> 28 of them.
const webhookProfiles = "testdata/recorded/webhook-leak-profiles"

const webhookDeliver = "github.com/memdoctor/memdoctor/lab.(*notifier).deliver"

// diagnoseUntil diagnoses a recorded session as if collection had stopped window after its
// start, as the accuracy matrix and a watch's looks do.
func diagnoseUntil(t *testing.T, dir string, window time.Duration) (*Diagnosis, *evidence.Evidence) {
	t.Helper()
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, ev, err := DiagnoseSession(s, evidence.Options{Source: true, Until: s.Manifest.Start.Add(window)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d, ev
}

// TestSlowGoroutineLeakFromProfiles: a steady slow goroutine leak seen only through periodic
// goroutine profiles. Three counts that only rose, short of the growth that matters but
// heading there, are a suspicion to watch, not "no leak": before, the rise was judged and
// dismissed (a sub-threshold rise was suspected only once it crossed the boundary of five
// readings), so a watch --until-confirmed stopped at 35 s on "no problem". At a minute,
// four counts that only rose by 31, every profile with more goroutines at the one site that
// made the growth, confirm it (before: suspected, info, for want of a fifth reading).
func TestSlowGoroutineLeakFromProfiles(t *testing.T) {
	for _, w := range []time.Duration{35 * time.Second, 45 * time.Second} {
		d, ev := diagnoseUntil(t, webhookProfiles, w)
		f := findingOf(d, KindGoroutineLeak)
		if f == nil {
			t.Errorf("%s: no goroutine-leak, not even suspected", w)
			continue
		}
		if f.Confidence == Suspected && f.WatchMoreSeconds <= 0 {
			t.Errorf("%s: suspected with nothing left to watch: %s", w, f.Title)
		}
		if st := d.Settled(ev.Target.Started); st.Done && f.Severity.Rank() < Warning.Rank() {
			t.Errorf("%s: the watch stops (%s) on a goroutine leak at %s", w, st.Why, f.Severity)
		}
	}
	d, _ := diagnoseUntil(t, webhookProfiles, time.Minute)
	f := findingOf(d, KindGoroutineLeak)
	if f == nil || f.Confidence != Confirmed || f.Severity.Rank() < Warning.Rank() {
		t.Fatalf("1m: want a confirmed goroutine-leak warning, got %+v", f)
	}
	if len(f.Culprits) == 0 || f.Culprits[0].Function != webhookDeliver {
		t.Errorf("1m: the first culprit is not %s: %+v", webhookDeliver, f.Culprits)
	}
	if !strings.Contains(f.Detail, "the census confirms it") {
		t.Errorf("1m: the finding does not say what confirmed four counts: %s", f.Detail)
	}
}

func findingOf(d *Diagnosis, k Kind) *Finding {
	for i := range d.Findings {
		if d.Findings[i].Kind == k {
			return &d.Findings[i]
		}
	}
	return nil
}

// spinProfiles is spin-leak (lab: each cancelled rollout leaves sixteen goroutines polling
// with a zero period, never parked) as its heap and goroutine profiles alone show it (the
// accuracy matrix's profiles vantage, recorded 2026-12-03 on a quiet machine): seven goroutine
// profiles counting 191, 191, 267, 234, 266, 315 and 345, the requests in flight coming and
// going around the leak; the goroutines started in lab.(*rollouts).follow 65 -> 287, more in
// each profile, caught at time.Sleep, the select's non-blocking receive or a preemption.
const spinProfiles = "testdata/recorded/spin-leak-profiles"

// TestSpinningLeakFromProfiles: the count alone does not cross the boundary (tau 0.67 over
// the first 6 profiles, 0.76 over 7), and no one site of the spinning goroutines climbs
// through all 7 (those in time.Sleep 49 -> 194 -> 171): before, "suspected" at a minute. A
// census that rose in every profile is a count that crosses the boundary alone: the site's
// over the first 6, the goroutines started in follow over all 7.
func TestSpinningLeakFromProfiles(t *testing.T) {
	d, _ := diagnoseUntil(t, spinProfiles, 65*time.Second)
	if f := findingOf(d, KindGoroutineLeak); f == nil || f.Confidence != Confirmed {
		t.Errorf("6 profiles: want a confirmed goroutine-leak, got %+v", f)
	}
	f := spinConfirmed(t, spinProfiles, 70*time.Second)
	if !strings.Contains(f.Detail, "started in "+spinFollow) {
		t.Errorf("the finding does not say what confirmed the count: %s", f.Detail)
	}
}

// spinAgent is spin-leak watched through its agent (the accuracy matrix's watch-agent vantage,
// recorded 2026-12-03 beside a .ci/run, load 4-5): the goroutine count's lows 150 -> 322 in a
// minute, the last third's growth short of a steady rise's as the spinners took the CPU from
// the service that makes them (it served fewer requests, and cancelled fewer rollouts).
const spinAgent = "testdata/recorded/spin-leak-watch-agent"

// TestSpinningLeakSlowsItself: a rise that slows at the end is a warm-up levelling off when
// its goroutines are parked, not when they spin. Before, "suspected: watch about 18.5s
// more" at a minute; about half the goroutines started in follow were caught running or
// runnable by the last goroutine profile.
func TestSpinningLeakSlowsItself(t *testing.T) {
	f := spinConfirmed(t, spinAgent, time.Minute)
	if !strings.Contains(f.Detail, "caught running or runnable, never parked") {
		t.Errorf("the finding does not say why a rise that slowed is confirmed: %s", f.Detail)
	}
}

const spinFollow = "github.com/memdoctor/memdoctor/lab.(*rollouts).follow"

// spinConfirmed is the goroutine-leak finding of a spin-leak recording diagnosed until window,
// which must be a confirmed warning naming (*rollouts).follow first.
func spinConfirmed(t *testing.T, dir string, window time.Duration) *Finding {
	t.Helper()
	d, _ := diagnoseUntil(t, dir, window)
	f := findingOf(d, KindGoroutineLeak)
	if f == nil || f.Confidence != Confirmed || f.Severity.Rank() < Warning.Rank() {
		t.Fatalf("%s until %v: want a confirmed goroutine-leak warning, got %+v", dir, window, f)
	}
	if len(f.Culprits) == 0 || f.Culprits[0].Function != spinFollow {
		t.Errorf("%s until %v: the first culprit is not %s: %+v", dir, window, spinFollow, f.Culprits)
	}
	return f
}
