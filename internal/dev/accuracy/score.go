package accuracy

import (
	"sort"
	"time"
)

// Score counts one finding kind's verdicts; NotJudged counts the expected ones the diagnosis
// said it could not judge (they count in neither precision nor recall).
type Score struct{ TP, FN, FP, NotJudged int }

// Precision is TP / (TP + FP); ok is false when nothing was reported.
func (s Score) Precision() (p float64, ok bool) {
	if s.TP+s.FP == 0 {
		return 0, false
	}
	return float64(s.TP) / float64(s.TP+s.FP), true
}

// Recall is TP / (TP + FN); ok is false when nothing was expected.
func (s Score) Recall() (r float64, ok bool) {
	if s.TP+s.FN == 0 {
		return 0, false
	}
	return float64(s.TP) / float64(s.TP+s.FN), true
}

// Tally sums verdicts by finding kind, for the verdicts whose window is w (0 = all).
func Tally(vs []Verdict, w time.Duration) map[string]*Score {
	out := map[string]*Score{}
	get := func(k string) *Score {
		s, ok := out[k]
		if !ok {
			s = &Score{}
			out[k] = s
		}
		return s
	}
	for _, v := range vs {
		if w != 0 && v.Window != w || v.Err != nil {
			continue
		}
		for _, k := range v.TP {
			get(k).TP++
		}
		for _, k := range v.FN {
			get(k).FN++
		}
		for _, k := range v.FP {
			get(k).FP++
		}
		for k := range v.NotJudged {
			get(k).NotJudged++
		}
	}
	return out
}

// kindsOf returns the kinds of a tally, sorted.
func kindsOf(m map[string]*Score) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
