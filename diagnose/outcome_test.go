package diagnose

import (
	"github.com/memdoctor/memdoctor/evidence"
)

// What the tests of this package read of a diagnosis.

// ruleOutcome is what one rule concluded of an evidence, in words: its findings, why it could
// not judge, and its detection limits (the diagnosis's, filtered by kind).
type ruleOutcome struct {
	findings  []Finding
	notJudged *NotJudged
	limits    []DetectionLimit
}

// judgeKind diagnoses an evidence and keeps what one rule concluded.
func judgeKind(ev *evidence.Evidence, k Kind) ruleOutcome {
	d := Diagnose(ev, Options{})
	var o ruleOutcome
	for _, f := range d.Findings {
		if f.Kind == k {
			o.findings = append(o.findings, f)
		}
	}
	for i := range d.NotJudged {
		if d.NotJudged[i].Kind == k {
			o.notJudged = &d.NotJudged[i]
		}
	}
	for _, l := range d.Limits {
		if l.Kind == k {
			o.limits = append(o.limits, l)
		}
	}
	return o
}

// findingOfKind is the first finding of a kind, nil when there is none.
func findingOfKind(fs []Finding, k Kind) *Finding {
	for i := range fs {
		if fs[i].Kind == k {
			return &fs[i]
		}
	}
	return nil
}
