package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/compare"
	"github.com/memdoctor/memdoctor/culprit"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
	"github.com/memdoctor/memdoctor/tune"
)

func f64(v float64) *float64 { return &v }

// compareResult is a comparison made by hand, with a row of every kind: significantly better,
// a regression, not significant, within the noise, too little data, not measured.
func compareResult() *compare.Result {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return &compare.Result{
		Schema: compare.Schema, Alpha: 0.05, MinChange: 0.1, SkipSeconds: 10, Test: compare.TestName,
		Old: compare.SideInfo{Name: "before", Target: "gateway", Start: start, Seconds: 60, Env: map[string]string{"GOGC": "100"}},
		New: compare.SideInfo{Name: "after\x1b[31m", Target: "gateway", Start: start.Add(time.Hour), Seconds: 45},
		Metrics: []compare.Metric{
			{Name: "gc_per_second", Unit: "per_second", Old: f64(12.7), New: f64(0.4), Change: f64(-0.9685), PValue: f64(0.00002), Significant: true, IntervalsOld: 10, IntervalsNew: 7},
			{Name: "gc_cpu_fraction", Unit: "fraction", Old: f64(0.229), New: f64(0.021), Change: f64(-0.908), PValue: f64(0.0001), Significant: true, IntervalsOld: 10, IntervalsNew: 7},
			{Name: "gc_assist_fraction", Unit: "fraction", Old: f64(0.29), New: f64(0.31), Change: f64(0.07), PValue: f64(0.02), IntervalsOld: 10, IntervalsNew: 7,
				Note: "not counted: the medians differ by 2.0 points, under 5.0 points or 10% (the noise between two runs of one program)"},
			{Name: "alloc_bytes_per_second", Unit: "bytes_per_second", Old: f64(277e6), New: f64(280e6), Change: f64(0.011), IntervalsOld: 3, IntervalsNew: 2,
				Note: "too little data: 3 and 2 intervals of 20s can never show a difference at alpha 0.05 (the smallest p-value is 0.2); need 4 and 4"},
			{Name: "live_heap_floor_bytes", Unit: "bytes", Old: f64(27 << 20), New: f64(28 << 20), Change: f64(0.037), PValue: f64(0.41), IntervalsOld: 10, IntervalsNew: 7},
			{Name: "rss_peak_bytes", Unit: "bytes", Old: f64(78 << 20), New: f64(790 << 20), Change: f64(9.13), PValue: f64(0.0003), Significant: true, Regression: true, IntervalsOld: 12, IntervalsNew: 9},
			{Name: "goroutines_peak", Unit: "count", IntervalsOld: 0, IntervalsNew: 0, Note: "too little data: no interval of 5s with a value in either session"},
		},
		Findings: compare.Findings{
			Resolved: []compare.FindingChange{{Kind: diagnose.KindGCOverhead, Old: &compare.FindingRef{Severity: diagnose.Warning, Confidence: diagnose.Confirmed, Title: "the GC runs 12.7 times per second"}}},
			New:      []compare.FindingChange{{Kind: diagnose.KindOOMRisk, New: &compare.FindingRef{Severity: diagnose.Warning, Confidence: diagnose.Confirmed, Title: "RSS reached 77% of the budget"}}},
			Persisting: []compare.FindingChange{{Kind: diagnose.KindAllocationHotspot, Culprit: "main.rewriteBody",
				Old: &compare.FindingRef{Severity: diagnose.Warning, Confidence: diagnose.Confirmed, Title: "main.rewriteBody allocates 40%"},
				New: &compare.FindingRef{Severity: diagnose.Info, Confidence: diagnose.Suspected, Title: "main.rewriteBody allocates 38%"}}},
		},
		Culprits: &compare.Culprits{Type: "inuse_space", Unit: "bytes", OldTotal: 95 << 20, NewTotal: 37 << 20,
			Shrank: []culprit.Delta{{Site: culprit.Site{Function: "main.(*assembler).bufferSegment"}, Delta: -94 << 20}},
			Grew:   []culprit.Delta{{Site: culprit.Site{Function: "main.newPagePool"}, Delta: 35 << 20}},
		},
		Regression: true,
		Notes:      []string{"GC figures are compared over intervals of 6s, long enough for 4 GC cycles"},
	}
}

func checkTextGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./report -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s changed (go test ./report -update if on purpose):\n%s", name, got)
	}
}

// TestCompareTextGolden: the table, the findings that changed, the heap diff and the notes.
// A name from the command line is printed without its escape sequences.
func TestCompareTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := CompareText(&b, compareResult(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("an escape sequence from a name reached the terminal")
	}
	checkTextGolden(t, "compare.golden.txt", b.String())
}

func tuneResult() *tune.Result {
	gc := func(v float64) *float64 { return &v }
	return &tune.Result{
		Schema: tune.Schema, MemoryBudgetBytes: 1 << 30, SafetyMargin: 0.1,
		Model: &diagnose.GCModel{LiveBytes: 27 << 20, NonHeapBytes: 7 << 20, OutsideBytes: 15 << 20, AllocBytesPerSecond: 270 << 20, GOGC: 100, Calibration: 1.29, GCPerSecond: 12.9},
		Baseline: tune.Candidate{Name: "baseline", Env: map[string]string{}, Predicted: &diagnose.GCPrediction{GCPerSecond: 12.9, HeapGoalBytes: 54 << 20, RSSPeakBytes: 76 << 20},
			GCPerSecond: 12.9, GCCPUFraction: 0.253, GCAssistFraction: 0.28, RSSPeakBytes: 77 << 20, InsideBudget: true,
			PredictionError: &tune.Errors{GCPerSecond: gc(0), RSSPeakBytes: gc(0.01)}},
		Candidates: []tune.Candidate{
			{Name: "gomemlimit-gogc-off", Env: map[string]string{"GOGC": "off", "GOMEMLIMIT": "803MiB"}, Predicted: &diagnose.GCPrediction{GCPerSecond: 0.47, RSSPeakBytes: 794 << 20},
				GCPerSecond: 0.37, GCCPUFraction: 0.02, GCAssistFraction: 0.29, RSSPeakBytes: 790 << 20, InsideBudget: true, PredictionError: &tune.Errors{GCPerSecond: gc(-0.2), RSSPeakBytes: gc(-0.01)}},
			{Name: "gogc-2850", Env: map[string]string{"GOGC": "2850"}, Predicted: &diagnose.GCPrediction{GCPerSecond: 0.45, RSSPeakBytes: 819 << 20},
				GCPerSecond: 0.38, GCCPUFraction: 0.021, RSSPeakBytes: 950 << 20, PredictionError: &tune.Errors{GCPerSecond: gc(-0.16), RSSPeakBytes: gc(0.16)}},
			{Name: "gomemlimit-gogc-950", Env: map[string]string{"GOGC": "950", "GOMEMLIMIT": "803MiB"}, Error: "the program ended: exit status 2 before the run's end"},
		},
		Why:     "GOGC=off GOMEMLIMIT=803MiB cut the GC's CPU from 25.3% to 2.0%.",
		Caveats: []string{"Load: each run saw the load of this experiment for about 20s."},
	}
}

func TestTuneTextGolden(t *testing.T) {
	r := tuneResult()
	c := r.Candidates[0]
	r.Chosen = &c
	var b bytes.Buffer
	if err := TuneText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	checkTextGolden(t, "tune.golden.txt", b.String())
}

// compareInput is the fixture session as OLD, and its first 20 seconds as NEW.
func compareInput(t *testing.T) CompareInput {
	s := openFixture(t)
	old := evidenceOf(t, s)
	cut, err := evidence.FromSession(s, evidence.Options{Until: old.Start.Add(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return old.End }
	return CompareInput{Result: compareResult(), Old: old, New: cut,
		OldD: diagnose.Diagnose(old, diagnose.Options{Now: now}), NewD: diagnose.Diagnose(cut, diagnose.Options{Now: now})}
}

// TestCompareHTML: the page holds the table (a regression marked as such), the findings that
// changed and the heap diff, and its data draws both sessions on one axis of seconds since
// each start.
func TestCompareHTML(t *testing.T) {
	in := compareInput(t)
	var b bytes.Buffer
	if err := CompareHTML(&b, in, HTMLOptions{Location: time.UTC, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr class="worse"><th scope="row">peak RSS</th><td>78.0 MiB</td><td>790.0 MiB</td><td class="change">&#43;913.0% worse</td>`,
		`<tr class="better"><th scope="row">GC cycles/s</th>`,
		`<td class="change">?</td>`,
		`<span class="badge">resolved</span> <span class="kind">gc-overhead</span>`,
		`<span class="badge">new</span> <span class="kind">oom-risk</span>`,
		`main.(*assembler).bufferSegment`,
		`too little data: 3 and 2 intervals`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "after\x1b") {
		t.Error("a raw escape sequence in the page")
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="memdoctor-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data in the page")
	}
	var data PageData
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	if !data.Elapsed || data.T0 != 0 || len(data.Charts) != 4 {
		t.Fatalf("data: elapsed %v, t0 %v, %d charts", data.Elapsed, data.T0, len(data.Charts))
	}
	if want := in.Old.Seconds(); data.End < want-0.01 || data.End > want+0.01 {
		t.Errorf("the axis ends at %v, want the longer session's %v", data.End, want)
	}
	for _, c := range data.Charts {
		var olds, news int
		for _, s := range c.Series {
			switch {
			case strings.HasPrefix(s.Name, "OLD "):
				olds++
				if s.Color != 8 || s.Dash == nil {
					t.Errorf("chart %s: OLD series %q is not grey and dashed", c.ID, s.Name)
				}
			case strings.HasPrefix(s.Name, "NEW "):
				news++
			}
		}
		if c.Empty == "" && (olds == 0 || olds != news) {
			t.Errorf("chart %s: %d OLD and %d NEW series", c.ID, olds, news)
		}
		if xs := c.X.v; len(xs) > 0 && (xs[0] < 0 || xs[len(xs)-1] > data.End+1) {
			t.Errorf("chart %s: times %v..%v are not since each start (end %v)", c.ID, xs[0], xs[len(xs)-1], data.End)
		}
	}
	// NEW stops at 20 s: its values past it are empty.
	mem := data.Charts[0]
	last := len(mem.X.v) - 1
	if mem.X.v[last] < 25 || !isNaN(mem.Series[1].Values.v[last]) {
		t.Errorf("memory chart: the last time %v should be OLD's alone", mem.X.v[last])
	}
}

func isNaN(v float64) bool { return v != v }

// TestCompareHTMLInBrowser draws the comparison page in headless Chromium: no console error,
// and every chart's series drawn.
func TestCompareHTMLInBrowser(t *testing.T) {
	b := newBrowser(t)
	in := compareInput(t)
	path := filepath.Join(t.TempDir(), "compare.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CompareHTML(f, in, HTMLOptions{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st := b.load(t, path, "", false)
	for _, e := range b.takeErrors() {
		t.Errorf("browser: %s", e)
	}
	if len(st.Charts) != 4 || st.Plots != 4 {
		t.Fatalf("%d chart canvases for %d plots, want 4", len(st.Charts), st.Plots)
	}
	for _, c := range st.Charts {
		if c.Drawn < 500 {
			t.Errorf("chart %s looks blank: %d pixels drawn", c.ID, c.Drawn)
		}
	}
}
