package recorder

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/session"
)

func runConfig(t *testing.T, command ...string) Config {
	return Config{Mode: "run", Out: filepath.Join(t.TempDir(), "s"), Command: command, Sample: 100 * time.Millisecond, Interval: time.Second}
}

// TestRunNotGoExitsFast runs a program that is not Go and exits at once, before discovery's
// patience for non-Go programs runs out: the recording must fail with ErrNotGo, not end as a
// session with nothing in it.
func TestRunNotGoExitsFast(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, truePath)
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrNotGo) || !strings.Contains(err.Error(), truePath) {
		t.Fatalf("Run(true) = %+v, %v; want ErrNotGo naming %s", res, err, truePath)
	}
	s, oerr := session.Open(cfg.Out)
	if oerr != nil {
		t.Fatal(oerr)
	}
	if s.Manifest.Status != session.StatusFailed || !strings.Contains(s.Manifest.StatusDetail, "not a Go program") {
		t.Errorf("manifest status %q (%s), want failed, not a Go program", s.Manifest.Status, s.Manifest.StatusDetail)
	}
}

// TestNotMeasured checks the two explanations of a program that ended before a Go target was
// found: a binary without Go build info, and a Go program that exited too soon.
func TestNotMeasured(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	if err := notMeasured(exec.Command(truePath), 3*time.Millisecond, 0); !errors.Is(err, ErrNotGo) {
		t.Errorf("true: %v, want ErrNotGo", err)
	}
	goProg := helperCmd(t, "exit")
	if err := notMeasured(goProg, 3*time.Millisecond, 3); !errors.Is(err, ErrNothingMeasured) || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("a Go program: %v, want ErrNothingMeasured with its status", err)
	}
}

// TestGCTimelineSurvivesKill reads the session of a running recording, as SIGKILL would leave
// it: its gctrace cycles must already be placed in time (the time base is written as soon as
// it is known, not at close).
func TestGCTimelineSurvivesKill(t *testing.T) {
	cfg := runConfig(t, helperCommand(t, "gc")...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	began := time.Now()
	go func() { _, err := Run(ctx, cfg); done <- err }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := session.Open(cfg.Out)
		var gc []session.GCEvent
		if err == nil {
			gc, err = s.ReadGC()
		}
		if err == nil && len(gc) >= 3 && s.Manifest.Status == session.StatusRunning {
			for _, ev := range gc {
				if ev.Time.Before(began.Add(-2*time.Second)) || ev.Time.After(time.Now().Add(time.Second)) {
					t.Fatalf("gc %d placed at %v; the recording began at %v (time base %v)", ev.N, ev.Time, began, s.Manifest.GCTraceBase)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no gctrace cycles in the running session")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
