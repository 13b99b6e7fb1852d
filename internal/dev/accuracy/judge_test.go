package accuracy

import (
	"slices"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/lab"
)

// check scores one diagnosis against a scenario's expectation: found, missed, false, not
// judged (with the diagnosis's reason), and too slow to show yet, each where it belongs.
func TestCheck(t *testing.T) {
	leak := func(sev diagnose.Severity, conf diagnose.Confidence, culprits ...string) diagnose.Finding {
		f := diagnose.Finding{Kind: diagnose.KindHeapLeak, Severity: sev, Confidence: conf}
		for _, c := range culprits {
			f.Culprits = append(f.Culprits, diagnose.Culprit{Function: c})
		}
		return f
	}
	const fn = "example.com/svc.(*Store).remember"
	ex := lab.Expect{Kinds: []string{"heap-leak"}, Culprit: fn, Absent: []string{"goroutine-leak"}}
	slow := ex
	slow.Visible, slow.Confirm = 2*time.Minute, 3*time.Minute
	for _, tc := range []struct {
		name                 string
		ex                   lab.Expect
		window               time.Duration
		d                    diagnose.Diagnosis
		ok                   bool
		tp, fn, fp, notJudge []string
	}{
		{"found with its culprit", ex, time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Warning, diagnose.Confirmed, fn)}}, true, []string{"heap-leak"}, nil, nil, nil},
		{"culprit not in the top 3", ex, time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Warning, diagnose.Confirmed, "a", "b", "c", fn)}}, false, []string{"heap-leak"}, nil, nil, nil},
		{"only suspected", ex, time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Info, diagnose.Suspected, fn)}}, false, nil, []string{"heap-leak"}, nil, nil},
		{"missed", ex, time.Minute, diagnose.Diagnosis{}, false, nil, []string{"heap-leak"}, nil, nil},
		{"not judged, with the reason", ex, time.Minute, diagnose.Diagnosis{NotJudged: []diagnose.NotJudged{{Kind: diagnose.KindHeapLeak, Reason: "no heap profiles"}}}, true, nil, nil, nil, []string{"heap-leak"}},
		{"a false warning of an absent kind", ex, time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Warning, diagnose.Confirmed, fn), {Kind: diagnose.KindGoroutineLeak, Severity: diagnose.Warning}}}, false, []string{"heap-leak"}, nil, []string{"goroutine-leak"}, nil},
		{"slow leak: too slow to show at 1m", slow, time.Minute, diagnose.Diagnosis{}, true, nil, nil, nil, []string{"heap-leak"}},
		{"slow leak: suspected at 2m without a culprit yet", slow, 2 * time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Info, diagnose.Suspected)}}, true, []string{"heap-leak"}, nil, nil, nil},
		{"slow leak: missed at 2m", slow, 2 * time.Minute, diagnose.Diagnosis{}, false, nil, []string{"heap-leak"}, nil, nil},
		{"slow leak: only suspected at 3m", slow, 3 * time.Minute, diagnose.Diagnosis{Findings: []diagnose.Finding{leak(diagnose.Info, diagnose.Suspected, fn)}}, false, nil, []string{"heap-leak"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Verdict{Ranks: map[string]int{}}
			check(&v, &tc.d, tc.ex, tc.window)
			var nj []string
			for k := range v.NotJudged {
				nj = append(nj, k)
			}
			if v.OK() != tc.ok || !slices.Equal(v.TP, tc.tp) || !slices.Equal(v.FN, tc.fn) || !slices.Equal(v.FP, tc.fp) || !slices.Equal(nj, tc.notJudge) {
				t.Errorf("ok %v tp %v fn %v fp %v not judged %v (problems %q); want ok %v tp %v fn %v fp %v not judged %v",
					v.OK(), v.TP, v.FN, v.FP, nj, v.Problems, tc.ok, tc.tp, tc.fn, tc.fp, tc.notJudge)
			}
		})
	}
}

// A false alarm is a warning of a kind the scenario lists as absent, or any warning in a
// control; an expected or allowed kind, or a finding at info, is none.
func TestFalseAlarm(t *testing.T) {
	f := func(k diagnose.Kind, sev diagnose.Severity) diagnose.Finding {
		return diagnose.Finding{Kind: k, Severity: sev, Confidence: diagnose.Confirmed}
	}
	leak := lab.Expect{Kinds: []string{"heap-leak"}, Absent: []string{"goroutine-leak"}, Allowed: []string{"gc-overhead"}}
	control := lab.Expect{Absent: []string{"heap-leak"}}
	for _, tc := range []struct {
		name string
		ex   lab.Expect
		fs   []diagnose.Finding
		want string
	}{
		{"the expected kind", leak, []diagnose.Finding{f(diagnose.KindHeapLeak, diagnose.Warning)}, ""},
		{"an allowed kind", leak, []diagnose.Finding{f(diagnose.KindGCOverhead, diagnose.Warning)}, ""},
		{"an absent kind", leak, []diagnose.Finding{f(diagnose.KindGoroutineLeak, diagnose.Critical)}, "goroutine-leak"},
		{"a kind neither expected nor absent", leak, []diagnose.Finding{f(diagnose.KindTransientSpike, diagnose.Warning)}, ""},
		{"any warning in a control", control, []diagnose.Finding{f(diagnose.KindTransientSpike, diagnose.Warning)}, "transient-spike"},
		{"info in a control", control, []diagnose.Finding{f(diagnose.KindHeapLeak, diagnose.Info)}, ""},
	} {
		if got := falseAlarm(&diagnose.Diagnosis{Findings: tc.fs}, tc.ex); got != tc.want {
			t.Errorf("%s: falseAlarm = %q, want %q", tc.name, got, tc.want)
		}
	}
}
