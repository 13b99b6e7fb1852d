package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/internal/dev/cgrouptest"
	"github.com/memdoctor/memdoctor/session"
)

// TestOOMKillE2E runs a service in a memory cgroup of its own (192 MiB) that holds 16 MiB
// more a second until the kernel's OOM killer ends it, under memdoctor run and under
// memdoctor watch. The session must hold a heap profile from the last seconds before the
// kill (taken as memory neared the limit, not at the 60 s interval), and the diagnosis must
// say the process was OOM-killed (oom-risk, critical) and name main.hoard as what that
// profile held most.
func TestOOMKillE2E(t *testing.T) {
	defer parallel(t)() // waits more than it computes: it runs beside the other waiting tests
	if testing.Short() {
		t.Skip("runs a service until the OOM killer ends it")
	}
	bin := filepath.Join(t.TempDir(), "oom-target")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/oom-target").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, mode := range []string{"run", "watch"} {
		t.Run(mode, func(t *testing.T) {
			procs := cgrouptest.Memory(t, "memdoctor-e2e", 192<<20)
			dir := filepath.Join(t.TempDir(), "session")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			common := []string{"--sample", "200ms", "--interval", "60s", "--out", dir, "--json", filepath.Join(t.TempDir(), "d.json")}
			target := []string{bin, "-wait", "2s", "-join", procs}
			var res result
			if mode == "run" {
				res = memdoctor(t, ctx, append(append([]string{"run"}, common...), append([]string{"--"}, target...)...)...)
			} else {
				res = watchUntilKilled(t, ctx, target, common)
			}
			checkOOMSession(t, dir, res)
		})
	}
}

// watchUntilKilled starts the service itself and watches its URL until it is gone.
func watchUntilKilled(t *testing.T, ctx context.Context, target, common []string) result {
	t.Helper()
	svc := exec.CommandContext(ctx, target[0], target[1:]...)
	out, err := svc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Process.Kill(); svc.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address from the service: %v", err)
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	return memdoctor(t, ctx, append(append([]string{"watch"}, common...), "--", url)...)
}

func checkOOMSession(t *testing.T, dir string, res result) {
	t.Helper()
	s, err := session.Open(dir)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, res.stderr)
	}
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	var lastProc time.Time
	for _, smp := range samples {
		if smp.Proc != nil {
			lastProc = smp.Time
		}
	}
	var before []session.ProfileRef
	for _, p := range s.Profiles {
		if p.Label == session.LabelBeforeOOM && p.Kind == session.KindHeap {
			before = append(before, p)
		}
	}
	if len(before) == 0 {
		t.Fatalf("no heap profile labelled %s; profiles %v\nstderr:\n%s", session.LabelBeforeOOM, s.Profiles, res.stderr)
	}
	last := before[len(before)-1]
	if gap := lastProc.Sub(last.Time); gap > 5*time.Second || gap < -time.Second {
		t.Errorf("the last %s heap profile was taken %s before the last reading of the process", session.LabelBeforeOOM, gap)
	}
	if !strings.Contains(strings.Join(s.Manifest.Notes, "\n"), "OOM-killed") {
		t.Errorf("the manifest's notes do not say the kernel OOM-killed the target: %q", s.Manifest.Notes)
	}
	b, err := os.ReadFile(filepath.Join(dir, session.DiagnosisFile))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Findings []struct {
			Kind, Severity, Title string
			Culprits              []struct{ Function string }
			Profiles              []string
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Findings {
		if f.Kind != "oom-risk" {
			continue
		}
		if f.Severity != "critical" || !strings.Contains(f.Title, "OOM-killed") || len(f.Culprits) == 0 ||
			f.Culprits[0].Function != "main.hoard" || len(f.Profiles) != 1 || !strings.Contains(f.Profiles[0], session.LabelBeforeOOM) {
			t.Errorf("oom-risk finding: %+v", f)
		}
		t.Logf("%s (%s): %s", f.Kind, f.Severity, f.Title)
		return
	}
	t.Errorf("no oom-risk finding: %+v\nstderr:\n%s", d.Findings, res.stderr)
}
