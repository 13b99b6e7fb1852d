package compare

import (
	"github.com/memdoctor/memdoctor/diagnose"
)

// Findings sorts the two diagnoses' findings: gone in NEW, new in NEW, in both.
type Findings struct {
	Resolved   []FindingChange `json:"resolved"`
	New        []FindingChange `json:"new"`
	Persisting []FindingChange `json:"persisting"`
}

// FindingChange is one finding in either session or both.
type FindingChange struct {
	Kind diagnose.Kind `json:"kind"`
	// Culprit is the top culprit's function, when the finding blames code.
	Culprit string      `json:"culprit,omitempty"`
	Old     *FindingRef `json:"old,omitempty"`
	New     *FindingRef `json:"new,omitempty"`
}

// FindingRef is a finding as one session's diagnosis reported it.
type FindingRef struct {
	Severity   diagnose.Severity   `json:"severity"`
	Confidence diagnose.Confidence `json:"confidence"`
	Title      string              `json:"title"`
}

// compareFindings pairs the findings of the two diagnoses: of one kind, those that blame the
// same function first, then the rest in the diagnoses' order (most severe first).
func compareFindings(oldD, newD *diagnose.Diagnosis) Findings {
	out := Findings{Resolved: []FindingChange{}, New: []FindingChange{}, Persisting: []FindingChange{}}
	for _, k := range diagnose.Kinds {
		olds, news := ofKind(oldD.Findings, k), ofKind(newD.Findings, k)
		usedNew := make([]bool, len(news))
		var unmatched []*diagnose.Finding
		for _, o := range olds {
			j := -1
			for i, n := range news {
				if !usedNew[i] && culpritOf(n) != "" && culpritOf(n) == culpritOf(o) {
					j = i
					break
				}
			}
			if j < 0 {
				unmatched = append(unmatched, o)
				continue
			}
			usedNew[j] = true
			out.Persisting = append(out.Persisting, change(k, o, news[j]))
		}
		for _, o := range unmatched {
			j := -1
			for i := range news {
				if !usedNew[i] {
					j = i
					break
				}
			}
			if j < 0 {
				out.Resolved = append(out.Resolved, change(k, o, nil))
				continue
			}
			usedNew[j] = true
			out.Persisting = append(out.Persisting, change(k, o, news[j]))
		}
		for i, n := range news {
			if !usedNew[i] {
				out.New = append(out.New, change(k, nil, n))
			}
		}
	}
	return out
}

func ofKind(fs []diagnose.Finding, k diagnose.Kind) []*diagnose.Finding {
	var out []*diagnose.Finding
	for i := range fs {
		if fs[i].Kind == k {
			out = append(out, &fs[i])
		}
	}
	return out
}

func culpritOf(f *diagnose.Finding) string {
	if f == nil || len(f.Culprits) == 0 {
		return ""
	}
	return f.Culprits[0].Function
}

func change(k diagnose.Kind, o, n *diagnose.Finding) FindingChange {
	c := FindingChange{Kind: k, Culprit: culpritOf(o)}
	if c.Culprit == "" {
		c.Culprit = culpritOf(n)
	}
	if o != nil {
		c.Old = &FindingRef{Severity: o.Severity, Confidence: o.Confidence, Title: o.Title}
	}
	if n != nil {
		c.New = &FindingRef{Severity: n.Severity, Confidence: n.Confidence, Title: n.Title}
	}
	return c
}
