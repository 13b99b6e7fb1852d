package compare

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdoctor/memdoctor/culprit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func metricOf(t *testing.T, r *Result, name string) Metric {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return Metric{}
}

// TestLeakFixed compares a leaking session with a fixed one of another length: the live-heap
// floor, the peak RSS, the GC rate and the allocation rate are significantly lower, the
// goroutines did not change, and nothing is a regression.
func TestLeakFixed(t *testing.T) {
	r := Compare(side("old", leaky), side("new", fixed), Options{})
	for _, name := range []string{"live_heap_floor_bytes", "rss_peak_bytes", "gc_per_second", "alloc_bytes_per_second"} {
		m := metricOf(t, r, name)
		if !m.Significant || m.Regression || m.Change == nil || *m.Change >= 0 {
			t.Errorf("%s: %+v, want significantly lower", name, m)
		}
	}
	if g := metricOf(t, r, "goroutines_peak"); g.Significant || g.PValue == nil || *g.PValue != 1 {
		t.Errorf("goroutines: %+v, want no change (p = 1: every interval equal)", g)
	}
	if r.Regression {
		t.Error("a regression where everything got better")
	}
	// The two sessions differ in length: each is cut from its own start, in whole intervals.
	gc := metricOf(t, r, "gc_per_second")
	if gc.IntervalSeconds != 5 || gc.IntervalsOld != 12 || gc.IntervalsNew != 9 {
		t.Errorf("GC intervals %vs, %d+%d; want 5s, 12+9", gc.IntervalSeconds, gc.IntervalsOld, gc.IntervalsNew)
	}
	// The headline figures are the diagnosis summary's (the report's numbers).
	if *gc.Old != side("old", leaky).D.Summary.GCPerSecond {
		t.Errorf("OLD's GC/s %v is not the summary's", *gc.Old)
	}
	checkGolden(t, "leak-fixed", r)
}

// TestRegression: the same comparison the other way round is a regression, which
// --fail-on-regression fails on.
func TestRegression(t *testing.T) {
	r := Compare(side("old", fixed), side("new", leaky), Options{})
	if m := metricOf(t, r, "live_heap_floor_bytes"); !m.Regression {
		t.Errorf("live heap floor %+v: want a regression", m)
	}
	if !r.Regression {
		t.Error("no regression")
	}
}

// TestSameProgram: two sessions of one steady program with a little noise differ in nothing.
func TestSameProgram(t *testing.T) {
	a := fixed
	a.steadyRSS = true
	b := a
	b.seconds = 50
	b.rss = func(s float64) float64 { return 61 * mib } // 1.7% more: noise, under 10%
	r := Compare(side("a", a), side("b", b), Options{})
	for _, m := range r.Metrics {
		if m.Significant || m.Regression {
			t.Errorf("%s: %+v, want no significant change", m.Name, m)
		}
	}
	if rss := metricOf(t, r, "rss_peak_bytes"); rss.PValue == nil || *rss.PValue >= 0.05 || !strings.Contains(rss.Note, "not counted") {
		t.Errorf("RSS: %+v; the test sees the 1 MiB, the noise floor must discount it", rss)
	}
	// With no noise floor, the 1 MiB counts.
	r = Compare(side("a", a), side("b", b), Options{MinChange: -1})
	if rss := metricOf(t, r, "rss_peak_bytes"); !rss.Significant || !rss.Regression {
		t.Errorf("RSS without a noise floor: %+v", rss)
	}
}

// TestAssistShareWeighedByGCCPU: a swing in how the GC's CPU splits into assists counts only
// when it moves a point of the process's CPU; a GC taking 1.6% of the CPU moves less whatever
// its assists do (two runs of one healthy lab program differed 31% -> 7%, p 0.008).
func TestAssistShareWeighedByGCCPU(t *testing.T) {
	for _, tc := range []struct {
		name             string
		gcCPU            float64 // CPU seconds per cycle (a cycle every 0.5 s, 0.5 CPU used per s)
		oldShare, nw     float64
		want, regression bool
		note             string
	}{
		{name: "small GC, big swing", gcCPU: 0.004, oldShare: 0.4, nw: 0.05, note: "of the CPU, under 1.0 points"},
		{name: "busy GC, assists double", gcCPU: 0.05, oldShare: 0.25, nw: 0.5, want: true, regression: true},
		{name: "busy GC, assists halve", gcCPU: 0.05, oldShare: 0.5, nw: 0.25, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := leaky, leaky
			a.gcCPU, b.gcCPU = tc.gcCPU, tc.gcCPU
			a.assist, b.assist = tc.oldShare, tc.nw
			m := metricOf(t, Compare(side("a", a), side("b", b), Options{}), "gc_assist_fraction")
			if m.PValue == nil || *m.PValue >= 0.05 {
				t.Fatalf("%+v: the test must see the change", m)
			}
			if m.Significant != tc.want || m.Regression != tc.regression {
				t.Errorf("significant %v regression %v (%s), want %v %v", m.Significant, m.Regression, m.Note, tc.want, tc.regression)
			}
			if !strings.Contains(m.Note, tc.note) {
				t.Errorf("note %q, want %q", m.Note, tc.note)
			}
		})
	}
}

// TestAllocationBetweenRounds: serving memdoctor's profiles allocates in the target, once a
// round; two runs of one program whose rounds cost differently (a goroutine profile's text in
// one, heavier load on the machine in the other) or fall elsewhere in the intervals differ in
// their allocation rate by the observer alone. Two runs of the lab's healthy program differed
// 1.8 -> 4.2 MiB/s (p 0.01) in CI so; the rate between rounds is the program's.
func TestAllocationBetweenRounds(t *testing.T) {
	a, b := fixed, fixed
	a.rounds, a.roundAt, a.roundAlloc = 5*time.Second, 2500*time.Millisecond, 2*mib
	b.rounds, b.roundAt, b.roundAlloc = 5*time.Second, 4500*time.Millisecond, 30*mib
	m := metricOf(t, Compare(side("a", a), side("b", b), Options{Skip: 10 * time.Second}), "alloc_bytes_per_second")
	if m.Significant || !strings.Contains(m.Note, "between memdoctor's rounds") {
		t.Errorf("allocation rate: %s, want no significant change, measured between rounds", fmtMetric(m))
	}
	if m.Old == nil || m.New == nil || math.Abs(*m.New / *m.Old - 1) > 0.1 {
		t.Errorf("allocation rate: %s, want the program's own in both", fmtMetric(m))
	}
	// The program's own change still shows.
	b.alloc *= 1.5
	m = metricOf(t, Compare(side("a", a), side("b", b), Options{Skip: 10 * time.Second}), "alloc_bytes_per_second")
	if !m.Significant || !m.Regression {
		t.Errorf("allocation rate 1.5x: %s, want a regression", fmtMetric(m))
	}
}

// TestTooShort: sessions too short for any p-value under alpha say so, with what they need,
// instead of reporting no change.
func TestTooShort(t *testing.T) {
	short := leaky
	short.seconds = 16 // three whole intervals of 5s
	shortFixed := fixed
	shortFixed.seconds = 19
	r := Compare(side("old", short), side("new", shortFixed), Options{})
	m := metricOf(t, r, "rss_peak_bytes")
	if m.PValue != nil || m.Significant || m.IntervalsOld != 3 || m.IntervalsNew != 3 ||
		!strings.Contains(m.Note, "too little data: 3 and 3 intervals of 5s can never show a difference at alpha 0.05 (the smallest p-value is 0.1); need 4 and 4") {
		t.Errorf("3 intervals against 3: %+v", m)
	}
	// Three against nine can: 2/C(12,3) = 0.009.
	r = Compare(side("old", short), side("new", fixed), Options{})
	if m := metricOf(t, r, "gc_per_second"); m.PValue == nil || !m.Significant || m.IntervalsOld != 3 || m.IntervalsNew != 9 {
		t.Errorf("3 intervals against 9: %+v", m)
	}
	tiny := fixed
	tiny.seconds = 4 // not one whole interval
	r = Compare(side("old", tiny), side("new", fixed), Options{})
	if m := metricOf(t, r, "gc_per_second"); m.PValue != nil || !strings.Contains(m.Note, "too little data: no interval of") || !strings.Contains(m.Note, "with a value in OLD") {
		t.Errorf("a 4s session: %+v", m)
	}
	// The headline figures are still given: only the test needs intervals.
	if m := metricOf(t, r, "rss_peak_bytes"); m.Old == nil || m.New == nil {
		t.Errorf("a 4s session lost its figures: %+v", m)
	}
}

// TestRestartIntervalsDropped: an interval in which the process restarted is left out.
func TestRestartIntervalsDropped(t *testing.T) {
	re := fixed
	re.restartAt = 22
	r := Compare(side("old", re), side("new", fixed), Options{})
	if m := metricOf(t, r, "alloc_bytes_per_second"); m.IntervalsOld != m.IntervalsNew-1 {
		t.Errorf("intervals %d+%d: the one holding the restart should be left out", m.IntervalsOld, m.IntervalsNew)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "OLD: the process restarted 1 time(s)") {
		t.Errorf("notes %q do not name the restart", r.Notes)
	}
}

// TestSkipAndGCIntervals: --skip leaves out each session's start (the headline then covers
// the rest), and rare GCs lengthen the GC figures' intervals to hold MinCycles cycles.
func TestSkipAndGCIntervals(t *testing.T) {
	slow := fixed
	slow.gcEvery = 4 * time.Second // 0.25/s: 4 cycles take 16s
	r := Compare(side("a", slow), side("b", slow), Options{Skip: 10 * time.Second})
	gc := metricOf(t, r, "gc_per_second")
	if gc.IntervalSeconds != 16 || gc.IntervalsOld != 2 {
		t.Errorf("GC intervals %vs x %d, want 16s x 2 (35s after the skip)", gc.IntervalSeconds, gc.IntervalsOld)
	}
	if rss := metricOf(t, r, "rss_peak_bytes"); rss.IntervalSeconds != 5 || rss.IntervalsOld != 7 {
		t.Errorf("RSS intervals %vs x %d, want 5s x 7", rss.IntervalSeconds, rss.IntervalsOld)
	}
	if *gc.Old < 0.24 || *gc.Old > 0.26 {
		t.Errorf("GC/s after the skip %v, want 0.25", *gc.Old)
	}
	if r.SkipSeconds != 10 {
		t.Errorf("skip %v", r.SkipSeconds)
	}
}

func TestFindingsChange(t *testing.T) {
	r := Compare(side("old", leaky), side("new", fixed), Options{})
	kinds := func(cs []FindingChange) (out []string) {
		for _, c := range cs {
			out = append(out, string(c.Kind))
		}
		return out
	}
	if got := kinds(r.Findings.Resolved); len(got) == 0 || got[0] != "heap-leak" {
		t.Errorf("resolved %v, want the heap leak", got)
	}
	r = Compare(side("old", fixed), side("new", leaky), Options{})
	if got := kinds(r.Findings.New); len(got) == 0 || got[0] != "heap-leak" {
		t.Errorf("new %v, want the heap leak", got)
	}
	r = Compare(side("old", leaky), side("new", leaky), Options{})
	if got := kinds(r.Findings.Persisting); len(got) == 0 || len(r.Findings.New)+len(r.Findings.Resolved) != 0 {
		t.Errorf("the same session twice: persisting %v, new %v, resolved %v", got, r.Findings.New, r.Findings.Resolved)
	}
}

// checkGolden compares the comparison's JSON with testdata/NAME.json.
func checkGolden(t *testing.T, name string, r *Result) {
	t.Helper()
	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./compare -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("%s changed (go test ./compare -update if on purpose):\n%s", path, got)
	}
}

// TestLongSessionBounded: a session of a year (or one whose times are corrupt) is cut into at
// most maxIntervals intervals.
func TestLongSessionBounded(t *testing.T) {
	a := side("a", fixed)
	b := side("b", fixed)
	b.Ev.End = b.Ev.Start.Add(365 * 24 * time.Hour)
	r := Compare(a, b, Options{})
	for _, m := range r.Metrics {
		if n := float64(365*24*3600) / m.IntervalSeconds; n > maxIntervals {
			t.Errorf("%s: intervals of %vs: %.0f of them in a year", m.Name, m.IntervalSeconds, n)
		}
	}
}

// TestSamplingNoise: a function's change counts only beyond what the heap profiler's sampling
// (one sample per 512 KiB) explains.
func TestSamplingNoise(t *testing.T) {
	const period = 512 << 10
	d := &culprit.DiffResult{OldTotal: 100 << 20, NewTotal: 40 << 20}
	for _, tc := range []struct {
		old, new int64
		noise    bool
	}{
		{25 << 20, 26 << 20, true},  // 50 and 52 samples: sd about 10 samples (5 MiB)
		{25 << 20, 45 << 20, false}, // 20 MiB: four sd
		{0, 2 << 20, true},          // 4 samples: 3 sd is 6 samples
		{0, 8 << 20, false},         // 16 samples from none: 3 sd is 12
		{95 << 20, 0, false},        // the leak's buffers
		{900 << 10, 0, true},        // under 1% of the heap
	} {
		x := culprit.Delta{Old: tc.old, New: tc.new, Delta: tc.new - tc.old}
		if got := samplingNoise(x, d, period); got != tc.noise {
			t.Errorf("%d -> %d bytes: noise %v, want %v", tc.old, tc.new, got, tc.noise)
		}
	}
}

func fmtMetric(m Metric) string {
	b, _ := json.Marshal(m)
	return string(b)
}
