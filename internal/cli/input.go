package cli

import (
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
)

// loadInput reads one input of a command that diagnoses what was recorded (compare, tune):
// anything analyze reads (a session directory, a folder of profiles, a profile, a gctrace
// log). It returns the diagnosis and the evidence it was made from.
func loadInput(e *env, arg string, budget uint64) (*diagnose.Diagnosis, *evidence.Evidence, error) {
	ev, _, err := loadEvidence(e, []string{arg}, loadOptions{budget: budget})
	if err != nil {
		return nil, nil, err
	}
	return diagnose.Diagnose(ev, diagnose.Options{}), ev, nil
}
