package diagnose

import (
	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/facts"
)

// GCModel is the GC pacer model the gc-overhead advice predicts from, calibrated on a session
// (see rule.GCModel); GCPrediction is what it predicts for a setting.
type (
	GCModel      = rule.GCModel
	GCPrediction = rule.GCPrediction
)

// ModelGC builds the pacer model of a session; false when the live heap or the allocation
// rate is unknown.
func ModelGC(ev *evidence.Evidence) (GCModel, bool) {
	sum := facts.Summarize(ev)
	return rule.ModelGC(sum, facts.Cadence(ev, sum), ev.Pacer, &rule.Default)
}
