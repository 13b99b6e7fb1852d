package sim_test

import (
	"slices"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/internal/dev/sim"
	"github.com/memdoctor/memdoctor/session"
)

// TestSpikesOverALeakAreNamed: a leak of 69 MiB/min under 73 MiB bursts every 27 s, watched
// a minute through the agent (simulator, leak-under-spikes seed 2): the GC ran twice in the
// window, after bursts, and the live heap never showed one. The heap in use did, rising 100
// MiB in a second and brought back by the next GC, but the bursts were judged kept because
// the floor after the last GC had risen by more than half of what they added, which the
// leak's own growth did. Each burst is now judged by the GC after it: both problems are
// warnings, each with its own culprit.
func TestSpikesOverALeakAreNamed(t *testing.T) {
	dir := t.TempDir()
	tr, err := sim.Generate(dir, 2, sim.Spec{Shape: sim.LeakUnderSpikes, Vantage: sim.WatchAgent, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{sim.KindHeapLeak, sim.KindTransientSpike} {
		var f *diagnose.Finding
		for i := range d.Findings {
			if string(d.Findings[i].Kind) == k {
				f = &d.Findings[i]
			}
		}
		if f == nil || f.Severity.Rank() < diagnose.Warning.Rank() {
			t.Errorf("no %s warning: %+v", k, d.Findings)
			continue
		}
		var names []string
		for _, c := range f.Culprits {
			names = append(names, c.Function)
		}
		if i := slices.Index(names, tr.Culprits[k]); i < 0 || i > 2 {
			t.Errorf("%s: culprit %s not in the top 3 of %v", k, tr.Culprits[k], names)
		}
	}
}
