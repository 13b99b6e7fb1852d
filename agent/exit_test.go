package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

const exitChildEnv = "MEMDOCTOR_AGENT_TEST_EXIT_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(exitChildEnv); dir != "" {
		exitChild(dir)
	}
	os.Exit(m.Run())
}

// exitChild is the process the exit-action test runs: an agent whose budget (1 MiB) any Go
// program exceeds, so the hard limit holds from the first sample.
func exitChild(dir string) {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	_, err := Start(context.Background(),
		WithBudget(1<<20),
		WithSampleInterval(100*time.Millisecond),
		WithExitOnHardLimit(dir, 500*time.Millisecond),
		WithLogger(log))
	if err != nil {
		log.Error(err.Error())
		os.Exit(98)
	}
	time.Sleep(time.Minute)
	os.Exit(99) // the guard never acted
}

func TestExitAction(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), exitChildEnv+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != DefaultExitStatus {
		t.Fatalf("child ended with %v, want exit status %d\nstderr:\n%s", err, DefaultExitStatus, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"level=ERROR", "memdoctor agent: memory hard limit", "held for", "wrote " + dir, "exiting with status 12"} {
		if !strings.Contains(last, want) {
			t.Errorf("last log line lacks %q:\n%s", want, last)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "memdoctor-") {
		t.Fatalf("exit directory holds %v (%v), want one memdoctor-<pid>-<time> session", entries, err)
	}
	sdir := filepath.Join(dir, entries[0].Name())
	s := readSession(t, sdir)
	m := s.manifest
	if m.Mode != "agent" || m.Status != record.StatusTargetExited || m.Target.GoVersionSource != "agent" || m.MemoryBudgetBytes != 1<<20 {
		t.Errorf("manifest %+v", m)
	}
	goSamples, procSamples := 0, 0
	for _, smp := range s.samples {
		if smp.Go != nil && smp.Go.Source == "runtime/metrics" && smp.Go.TotalBytes > 0 {
			goSamples++
		}
		if smp.Proc != nil && smp.Proc.RSSBytes > 1<<20 {
			procSamples++
		}
	}
	if goSamples < 5 || procSamples < 5 { // the hold is 0.5s at 0.1s a sample
		t.Errorf("%d Go and %d /proc samples in metrics.jsonl", goSamples, procSamples)
	}
	labels := map[string]bool{}
	for _, p := range s.profiles {
		labels[p.Kind+"/"+p.Label] = true
	}
	if !labels["heap/exit"] || !labels["goroutine/exit"] || !labels["heap/"] {
		t.Errorf("profiles %v: want the exit pair and the periodic round", labels)
	}
	b, err := os.ReadFile(filepath.Join(sdir, record.DiagnosisFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep ExitReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Schema != ExitSchema || rep.ExitStatus != 12 || rep.HeldSeconds < 0.5 || rep.HardLimit != 996147 /* 95% of 1 MiB */ {
		t.Errorf("report %+v", rep)
	}
	if rep.Breakdown.RSSBytes <= 1<<20 || rep.Pressure.Level != PressureCritical || len(rep.PressureHistory) == 0 {
		t.Errorf("breakdown RSS %d, pressure %+v, history %d", rep.Breakdown.RSSBytes, rep.Pressure, len(rep.PressureHistory))
	}
	if !strings.Contains(rep.Note, "memdoctor analyze") {
		t.Errorf("note %q", rep.Note)
	}
}

// written is a session directory as the exit action wrote it, read strictly: every line of
// metrics.jsonl is a whole sample and every file in profiles/ is named as memdoctor names
// them (memdoctor's session package reads it tolerantly; the agent's module has no reader).
type written struct {
	manifest record.Manifest
	samples  []record.Sample
	profiles []record.ProfileRef
}

func readSession(t *testing.T, dir string) written {
	t.Helper()
	var s written
	b, err := os.ReadFile(filepath.Join(dir, record.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s.manifest); err != nil || s.manifest.Format != record.Format {
		t.Fatalf("manifest: %v, format %q", err, s.manifest.Format)
	}
	b, err = os.ReadFile(filepath.Join(dir, record.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var smp record.Sample
		if err := json.Unmarshal([]byte(line), &smp); err != nil {
			t.Fatalf("%s line %d: %v", record.MetricsFile, i+1, err)
		}
		s.samples = append(s.samples, smp)
	}
	entries, err := os.ReadDir(filepath.Join(dir, record.ProfilesDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		ref, err := record.ParseProfileFileName(e.Name())
		if err != nil {
			t.Errorf("%s: %v", record.ProfilesDir, err)
			continue
		}
		s.profiles = append(s.profiles, ref)
	}
	return s
}

// TestPressureReachesTheApplication runs a real agent over a budget: the callback and the
// channel both see the critical level, and a panicking callback does not stop the agent.
func TestPressureReachesTheApplication(t *testing.T) {
	calls := make(chan Pressure, 16)
	first := true
	a, err := Start(context.Background(),
		WithBudget(1<<20),
		WithSampleInterval(100*time.Millisecond),
		WithPressureFunc(func(p Pressure) {
			calls <- p
			if first {
				first = false
				panic("the application's callback panics")
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	p := <-a.Pressure()
	if p.Level != PressureCritical || p.BudgetBytes != 1<<20 || p.UsedBytes < 1<<20 {
		t.Errorf("channel: %+v", p)
	}
	if p := <-calls; p.Level != PressureCritical {
		t.Errorf("callback: %+v", p)
	}
	n := a.ring.len()
	waitFor(t, "samples after the callback's panic", func() bool { return a.ring.len() > n+2 })
	if got := a.CurrentPressure(); got.Level != PressureCritical {
		t.Errorf("current %+v", got)
	}
}
