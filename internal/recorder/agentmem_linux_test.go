package recorder

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// TestWatchAStarvedAgent watches, through its agent alone (--source agent), a real service
// whose agent answers for 3 s and then nothing (as an agent starved of CPU by the service's
// own goroutines does) while the service leaks 40 goroutines a second. Its process is matched
// by its socket and read from its memory: the session has process-memory samples to the
// window's end beside the agent's runtime/metrics ones, goroutine profiles read without
// stopping it, a note saying how the process was matched and why its memory is read; the
// watch runs to its end; and the diagnosis judges the goroutine leak instead of leaving it
// "not judged" for the readings' end.
func TestWatchAStarvedAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("watches an agent that stops answering for 20 s, and waits for its last pull: 30 s")
	}
	// It mostly waits (for its window, or for requests to time out): beside another test.
	t.Parallel()
	needProc(t)
	pid, url := startStallAgent(t, "-stall-at", stallAt.String(), "-leak", "40")
	cfg := watchConfig(t)
	cfg.Duration, cfg.ReadMemory, cfg.Source = 20*time.Second, true, SourceAgent
	start := time.Now()
	s := watched(t, cfg, url, pid)
	end := start.Add(cfg.Duration)

	var agentLast, memLast time.Time
	mem := 0
	s.EachSample(func(smp *session.Sample) error {
		switch {
		case smp.Go == nil:
		case smp.Go.Source == "runtime/metrics":
			agentLast = later(agentLast, smp.Time)
		case smp.Go.Source == "process-memory":
			memLast = later(memLast, smp.Time)
			mem++
		}
		return nil
	})
	if !agentLast.Before(start.Add(stallAt + 2*time.Second)) {
		t.Errorf("the agent's samples reach %v into the watch: it was to stop answering at %v", agentLast.Sub(start), stallAt)
	}
	if mem < 20 || memLast.Before(end.Add(-2*time.Second)) {
		t.Errorf("%d process-memory samples, the last at %v of a %v watch: want them to its end", mem, memLast.Sub(start), cfg.Duration)
	}
	if !noted(s, "matched by its socket: process ") || !noted(s, "links the memdoctor agent") || !noted(s, "the memdoctor agent's newest sample is") {
		t.Errorf("no note says how the process was matched and why its memory is read: %q", s.Manifest.Notes)
	}
	if g, ok := costOf(s, session.AttemptGoroutine, session.SourceMemory); !ok || g.Reads < 1 || g.Stops != 0 {
		t.Errorf("goroutine profiles from memory: %+v (found %v): want some, the process never stopped", g, ok)
	}

	d, _, err := diagnose.DiagnoseSession(s, evidence.Options{}, diagnose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(d.NotJudged, func(n diagnose.NotJudged) bool { return n.Kind == diagnose.KindGoroutineLeak }); i >= 0 {
		t.Errorf("goroutine-leak not judged: %s", d.NotJudged[i].Reason)
	}
	i := slices.IndexFunc(d.Findings, func(f diagnose.Finding) bool { return f.Kind == diagnose.KindGoroutineLeak })
	if i < 0 {
		t.Fatalf("no goroutine-leak finding; findings %v", kinds(d))
	}
	if f := d.Findings[i]; !slices.ContainsFunc(f.Culprits, func(c rule.Culprit) bool { return c.Function == "main.leaked" }) {
		t.Errorf("the goroutine leak names %+v, not main.leaked", f.Culprits)
	}
}

// stallAt is when the test's agent stops answering.
const stallAt = 3 * time.Second

// startStallAgent builds and starts testdata/stallagent (a service whose agent stops
// answering, see its doc) with args, and returns its pid and agent URL; it ends with the test.
func startStallAgent(t *testing.T, args ...string) (int, string) {
	t.Helper()
	pid, ready := startTestProgram(t, buildProgram(t, "./testdata/stallagent"), args...)
	url, ok := strings.CutPrefix(ready, "ready ")
	if !ok || !strings.HasPrefix(url, "http://") {
		t.Fatalf("the program said %q, not ready http://...", ready)
	}
	return pid, url + "/debug/memdoctor/"
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func kinds(d *diagnose.Diagnosis) []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, string(f.Kind)+": "+f.Title)
	}
	return out
}
