package main

import (
	"testing"
	"time"
)

// TestJudgePrefixes judges the prefixes of two recorded lab sessions with this repository's
// rules: the goroutine leak is not yet visible in the first 2 s and found by the whole
// session's 20 s; the healthy service is right at every prefix.
func TestJudgePrefixes(t *testing.T) {
	leak := version{version: "v", role: before, expect: kinds{"goroutine-leak"}}
	ps, err := judgePrefixes("../../diagnose/testdata/sessions/goroutine-leak", leak, 2*time.Second, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 10 || ps[0].Seconds != 2 || ps[9].Seconds != 20 {
		t.Fatalf("prefixes %+v; want 2 s, 4 s, ... 20 s", ps)
	}
	if ps[0].Right || !ps[9].Right || ps[9].Found == "none" {
		t.Errorf("leak prefixes %+v; want wrong at 2 s, right at 20 s", ps)
	}
	ttv := timeToVerdict(ps)
	if ttv <= 2 || ttv > 20 || !ps[int(ttv/2)-1].Right || ps[int(ttv/2)-2].Right {
		t.Errorf("time to verdict %g s; prefixes %+v", ttv, ps)
	}
	// A watch --until-confirmed stops on the confirmed leak, not before the verdict.
	if stop, right := stopsAt(ps); stop < ttv || !right {
		t.Errorf("a watch until confirmed stops at %g s (right %v), the verdict comes at %g s; prefixes %+v", stop, right, ttv, ps)
	}
	ps, err = judgePrefixes("../../diagnose/testdata/sessions/healthy", version{version: "v", role: after}, 5*time.Second, 20*time.Second)
	if err != nil || len(ps) != 4 {
		t.Fatalf("healthy prefixes %+v, %v", ps, err)
	}
	for _, p := range ps {
		if !p.Right {
			t.Errorf("healthy session wrong at %g s: %s", p.Seconds, p.Found)
		}
		if p.Settled { // finding nothing, a watch covers diagnose.CleanWindow (30 s)
			t.Errorf("a watch of the healthy session stops at %g s", p.Seconds)
		}
	}
	if _, err := judgePrefixes(t.TempDir(), leak, 5*time.Second, 20*time.Second); err == nil {
		t.Error("an empty directory judged without error")
	}
	if _, err := judgePrefixes("../../diagnose/testdata/sessions/healthy", leak, 0, 20*time.Second); err == nil {
		t.Error("a zero step judged without error")
	}
}

func TestVerdictCell(t *testing.T) {
	p := func(rights ...bool) []prefixVerdict {
		var ps []prefixVerdict
		for i, r := range rights {
			ps = append(ps, prefixVerdict{Seconds: float64(5 * (i + 1)), Right: r})
		}
		return ps
	}
	bug := []string{"goroutine-leak"}
	for _, c := range []struct {
		name string
		r    result
		want string
	}{
		{"not judged", result{ExpectKinds: bug}, "n/a"},
		{"bug found at 15 s", result{ExpectKinds: bug, Prefixes: p(false, false, true, true)}, "15s"},
		{"bug never found", result{ExpectKinds: bug, Prefixes: p(false, false, false)}, "never"},
		{"bug found, lost, found", result{ExpectKinds: bug, Prefixes: p(false, true, false, true)}, "10s (2 flips)"},
		{"bug found, then lost", result{ExpectKinds: bug, Prefixes: p(true, true, false)}, "5s (1 flip)"},
		{"fixed, no false alarm", result{Prefixes: p(true, true, true)}, "-"},
		{"fixed, false alarm at 10 s", result{Prefixes: p(true, false, true)}, "false at 10s (2 flips)"},
	} {
		if got := verdictCell(c.r); got != c.want {
			t.Errorf("%s: verdictCell = %q, want %q", c.name, got, c.want)
		}
	}
}
