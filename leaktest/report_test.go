package leaktest

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkReport runs a Loop on a recorder and returns its report and what Loop would write.
func checkReport(t *testing.T, fn func(), opts ...Option) *Report {
	t.Helper()
	rec := &recorder{TB: t}
	rep := checkWith(rec, fn, nil, append([]Option{noHolders, shortRounds}, opts...))
	if rep == nil {
		t.Fatalf("Loop refused to run: %s", rec.failure())
	}
	return rep
}

// A heap leak's report carries the verdict, the proof and the sites its failure names.
func TestReportHeapLeak(t *testing.T) {
	defer func() { leakedBytes = nil }()
	rep := checkReport(t, leakBytes)
	if !rep.Failed() || rep.Heap == nil || rep.Heap.Verdict != VerdictLeak {
		t.Fatalf("the report of a heap leak: %+v", rep)
	}
	if rep.Heap.PerCall < 200 || rep.Heap.Tau < confirmTau || !rep.Heap.Rising || rep.Heap.Proof == "" {
		t.Errorf("the heap's series: %+v", rep.Heap)
	}
	if len(rep.HeapSites) == 0 || rep.HeapSites[0].Program.Function != "github.com/memdoctor/memdoctor/leaktest.leakBytes" || !rep.HeapSites[0].InFn {
		t.Fatalf("the heap sites: %+v", rep.HeapSites)
	}
	if s := rep.HeapSites[0]; s.Share < 0.9 || s.BytesPerCall < 200 || s.Program.Line != lineOf(t, "func leakBytes()") {
		t.Errorf("the first site: %+v", s)
	}
	if !strings.HasPrefix(rep.Message, "leaktest: the live heap keeps growing") || !strings.Contains(rep.Message, rep.Heap.Proof) {
		t.Errorf("the message: %s", rep.Message)
	}
	if rep.Goroutines == nil || rep.Goroutines.Verdict != VerdictNoLeak || len(rep.Groups) != 0 {
		t.Errorf("the goroutines of a heap leak: %+v, %+v", rep.Goroutines, rep.Groups)
	}
}

// A goroutine leak's report carries its groups: what they wait for, where, their own
// function and the go statement.
func TestReportGoroutineLeak(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	rep := checkReport(t, func() { go waitOn(block) }, GoroutinesOnly())
	if !rep.Failed() || rep.Heap != nil || rep.Goroutines.Verdict != VerdictLeak || len(rep.Groups) == 0 {
		t.Fatalf("the report of a goroutine leak: %+v", rep)
	}
	g := rep.Groups[0]
	if g.State != "chan receive" || g.Wait.Function != "github.com/memdoctor/memdoctor/leaktest.waitOn" || g.CreatedBy.Line == 0 || g.Added < 4 {
		t.Errorf("the group: %+v", g)
	}
	if g.Function.Function != "github.com/memdoctor/memdoctor/leaktest.waitOn" || !strings.HasSuffix(g.Function.File, "/leaktest/loop_test.go") || g.Function.Line == 0 {
		t.Errorf("the group's own function: %+v", g.Function)
	}
	if !strings.Contains(rep.Message, "more goroutines [chan receive]") || !strings.Contains(rep.Message, "their function, defined at leaktest/loop_test.go:") {
		t.Errorf("the message: %s", rep.Message)
	}
}

// A function that leaks nothing is reported as such, with the line Loop logs; the report
// reads back from its JSON.
func TestReportNoLeak(t *testing.T) {
	rep := checkReport(t, cheap)
	if rep.Failed() || rep.Verdict != VerdictNoLeak || rep.Heap.Verdict != VerdictNoLeak || rep.Goroutines.Verdict != VerdictNoLeak {
		t.Fatalf("the report of a function that leaks nothing: %+v", rep)
	}
	if !strings.HasPrefix(rep.Message, "leaktest: no leak in ") || rep.Rounds < minReadings-1 || rep.Calls != int64(rep.Rounds)*rep.CallsPerRound {
		t.Errorf("the report: %+v", rep)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || back.Message != rep.Message || back.Verdict != rep.Verdict || back.Heap.Readings != rep.Heap.Readings {
		t.Errorf("the report's JSON %s reads back as %+v (%v)", data, back, err)
	}
}
