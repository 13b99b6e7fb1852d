package memread_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/memdoctor/memdoctor/culprit"
)

// stackCounts sums a goroutine profile's samples by their stacks ("f <- g <- ..."), leaf first.
func stackCounts(p *profile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		out[strings.Join(sampleFuncs(s), " <- ")] += s.Value[0]
	}
	return out
}

// TestGoroutineSampleIsTheStoppedProfile reads every goroutine of a program whose goroutines
// park and spin without stopping it, through a detached reader (which cannot stop it: it has
// let go of the tracer): each stack of the parked goroutines is the one the profile read with
// the program stopped shows, with the same count and creator, and the spinning goroutines are
// either read where they were preempted or counted running, never as a wrong stack. The
// program exits cleanly afterwards (start's cleanup).
func TestGoroutineSampleIsTheStoppedProfile(t *testing.T) {
	tg := start(t, build(t, "", false), "-parked", "25", "-spin", "4")
	r := open(t, tg.pid)
	stopped, _, err := r.GoroutineProfile()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Detach(); err != nil {
		t.Fatal(err)
	}
	for fn, want := range map[string]bool{"main.parked": true, "main.park": false, "net/http/pprof.Index": false, "runtime.gopark": true} {
		if got := r.HasFunc(fn); got != want {
			t.Errorf("HasFunc(%q) = %v, want %v", fn, got, want)
		}
	}
	p, sr, err := r.GoroutineSample(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reading: %s", sr)
	if sr.Scale != 1 {
		t.Errorf("every goroutine was to be read: scale %.2f", sr.Scale)
	}
	want, got := stackCounts(stopped), stackCounts(p)
	for stack, n := range want {
		if !strings.Contains(stack, "main.parked") {
			continue
		}
		if got[stack] != n {
			t.Errorf("%s: %d read without stopping, %d stopped", stack, got[stack], n)
		}
	}
	spinning := int64(sr.Running + sr.Moved)
	for stack, n := range got {
		if strings.Contains(stack, "main.spin") {
			if !strings.HasSuffix(stack, "main.spin") {
				t.Errorf("a spinning goroutine's stack does not end in main.spin: %s", stack)
			}
			t.Logf("spinning: %s (%d)", stack, n)
			spinning += n
			continue
		}
		if want[stack] == 0 {
			t.Errorf("a stack the stopped profile does not hold: %s (%d)", stack, n)
		}
	}
	if spinning != 4 {
		t.Errorf("the 4 spinning goroutines: %d read, %d running, %d moved", spinning-int64(sr.Running+sr.Moved), sr.Running, sr.Moved)
	}
	for _, s := range p.Sample {
		if names := sampleFuncs(s); slices.Contains(names, "main.parked") {
			if c := s.Label[culprit.CreatedByLabel]; len(c) != 1 || c[0] != "main.main" {
				t.Errorf("the parked goroutines are labelled created by %q, want main.main", c)
			}
		}
	}
}

// TestGoroutineSampleScales reads a sample of a program's 4,000 parked goroutines: about 400
// read, each counting for about ten, and the profile counts about 4,000 in main.parked.
func TestGoroutineSampleScales(t *testing.T) {
	tg := start(t, build(t, "", false), "-parked", "4000")
	r := open(t, tg.pid)
	p, sr, err := r.GoroutineSample(400)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reading: %s", sr)
	if sr.Read > 401 || sr.Read < 380 || sr.Scale < 9 {
		t.Errorf("read %d goroutines, each for %.2f: want about 400, each for about 10", sr.Read, sr.Scale)
	}
	var parked int64
	for stack, n := range stackCounts(p) {
		if strings.HasSuffix(stack, "main.parked") {
			parked += n
		}
	}
	if parked < 3700 || parked > 4300 {
		t.Errorf("main.parked counts %d goroutines from the sample, want about 4000", parked)
	}
}
