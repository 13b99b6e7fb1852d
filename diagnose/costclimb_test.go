package diagnose

import (
	"strings"
	"testing"

	"github.com/memdoctor/memdoctor/session"
)

// TestCostPerRequestClimbs: the lab's cost-climb from its heap profiles alone over 3 minutes
// (recorded, testdata/recorded): a notifier serializes its whole undelivered backlog on every
// alert, at a flat 20 alerts a second, so the allocation rate climbs several times over, all
// of the climb at flush. Profiles carry no GC rate, so the climb was only information; a
// rate that tripled, made at one site far beyond its early share (more traffic would raise
// every site alike), is a warning that names that site.
func TestCostPerRequestClimbs(t *testing.T) {
	s, err := session.Open("testdata/recorded/cost-climb-profiles")
	if err != nil {
		t.Fatal(err)
	}
	d := diagnoseSession(t, s, Options{})
	for _, f := range d.Findings {
		if f.Kind != KindCostGrowth {
			continue
		}
		t.Logf("%s %s: %s\n%s", f.Severity, f.Confidence, f.Title, f.Detail)
		if f.Severity.Rank() < Warning.Rank() || len(f.Culprits) == 0 || !strings.HasSuffix(f.Culprits[0].Function, "lab.(*alertNotifier).flush") {
			t.Errorf("%s %s, culprits %+v: want a warning naming flush", f.Severity, f.Confidence, f.Culprits)
		}
		return
	}
	t.Errorf("no cost-growth finding: %+v", d.NotJudged)
}
