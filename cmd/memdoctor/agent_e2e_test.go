package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/collect/agentclient"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// TestAgentSpikeEndToEnd runs a program that embeds the agent and makes a transient spike in
// main.buildReport a few seconds after it starts. memdoctor watch attaches only after the
// spike: it must see it through the agent's history, copy the before/after pair the agent
// kept, and diagnose a transient spike whose culprits include main.buildReport.
func TestAgentSpikeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program for half a minute")
	}
	defer parallel(t)()
	bin := filepath.Join(t.TempDir(), "agent-spike")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/agent-spike").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, url := startService(t, ctx, bin)

	// Wait, as an operator would, until the agent has the spike's pair; watch starts after.
	ac, err := agentclient.New(url)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		evs, err := ac.Events(ctx)
		if err == nil && len(evs) > 0 && evs[0].After != "" && evs[0].Trace != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent kept no complete spike event: %+v, %v", evs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	dir := filepath.Join(t.TempDir(), "s")
	jsonPath := filepath.Join(t.TempDir(), "d.json")
	res := memdoctor(t, ctx, "watch", "--duration", "4s", "--interval", "2s", "--out", dir, "--json", jsonPath, url)
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Manifest
	if m.Target.AgentURL != url+"debug/memdoctor/" || m.Target.PprofURL != url+"debug/pprof/" || m.Target.GoVersionSource != "agent" || m.Target.PID != target.Process.Pid {
		t.Errorf("target %+v", m.Target)
	}
	before := 0
	samples, err := s.ReadSamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range samples {
		if smp.Go != nil && smp.Go.Source != "runtime/metrics" {
			t.Fatalf("a %q sample beside the agent", smp.Go.Source)
		}
		if smp.Time.Before(m.Start) {
			before++
		}
	}
	if before < 5 {
		t.Errorf("%d samples from before watch attached: the agent's history was not copied", before)
	}
	var pair []string
	for _, p := range s.Profiles {
		if p.Kind == session.KindHeap && (p.Label == "before-heap-jump" || p.Label == "after-heap-jump") {
			pair = append(pair, p.Label)
		}
	}
	if len(pair) != 2 || pair[0] != "before-heap-jump" || pair[1] != "after-heap-jump" {
		t.Fatalf("labelled heap profiles %v, want the before/after pair in time order", pair)
	}
	if traces, err := session.TraceFiles(dir); err != nil || len(traces) == 0 {
		t.Errorf("traces %v, %v: the flight recorder's snapshot was not copied", traces, err)
	}

	d := loadDiagnosis(t, jsonPath)
	var spikes []diagnose.Finding
	for _, f := range d.Findings {
		if f.Kind == diagnose.KindTransientSpike {
			spikes = append(spikes, f)
		}
	}
	if len(spikes) == 0 {
		t.Fatalf("no %s finding; findings: %+v", diagnose.KindTransientSpike, d.Findings)
	}
	// The flight recorder's trace says who paid for the spike in mark assists.
	if f := spikes[0]; f.Evidence["mark_assist_seconds"] <= 0 || !strings.Contains(f.Detail, "mark assists") {
		t.Errorf("the spike finding does not report the traced mark assists: %v\n%s", f.Evidence, f.Detail)
	} else {
		t.Logf("assists: %.3f s over %.1f s traced: %s", f.Evidence["mark_assist_seconds"], f.Evidence["traced_seconds"], f.Detail)
	}
	var culprits []string
	for _, f := range spikes {
		for _, c := range f.Culprits {
			culprits = append(culprits, c.Function)
			if c.Function == "main.buildReport" {
				return
			}
		}
	}
	t.Errorf("the transient-spike culprits are %v, want main.buildReport", culprits)
}
