package cli

import (
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/session"
)

// loadInput reads one input of a command that diagnoses what was recorded (compare, tune): a
// session directory. It returns the diagnosis and the evidence it was made from. It is the
// one place that says what such an input may be: when analyze reads more (folders of
// profiles, single profiles), this is the function to swap for its loader.
func loadInput(arg string, budget uint64) (*diagnose.Diagnosis, *evidence.Evidence, error) {
	s, err := session.Open(arg)
	if err != nil {
		return nil, nil, err
	}
	return diagnoseSession(s, budget)
}
