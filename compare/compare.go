package compare

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
)

// maxIntervals bounds the intervals a session is cut into: 20,000 intervals of 5 s cover 28
// hours; a longer session gets longer intervals.
const maxIntervals = 20000

// Schema identifies the comparison JSON format.
const Schema = "memdoctor/compare/v1"

// Defaults of Options.
const (
	DefaultInterval  = 5 * time.Second
	DefaultAlpha     = 0.05
	DefaultMinCycles = 4
	DefaultMinChange = 0.10
)

// Options tune a comparison.
type Options struct {
	// Interval is the shortest length of the intervals each session is cut into (0 = 5s: five
	// samples at memdoctor's default rate). A quantity read less often gets intervals that hold
	// at least two of its readings.
	Interval time.Duration
	// MinCycles: a quantity the runtime updates once per GC cycle is measured over intervals
	// long enough to hold this many cycles at the busier session's GC rate (0 = 4), so that
	// its value is not the noise of one or two cycles.
	MinCycles int
	// Skip leaves out each session's first Skip: start-up, a cache warming, a load ramping.
	Skip time.Duration
	// Alpha is the significance level (0 = 0.05).
	Alpha float64
	// MinChange is the smallest relative change of the intervals' medians that counts as a
	// change (0 = 10%; negative = any): two runs of one program differ by a few percent
	// through chance alone (heap layout, connections, the machine's other work), and the
	// test, which treats each interval as a sample, would call that significant.
	MinChange float64
	// TopCulprits is how many functions the profile diff keeps each way (0 = 5).
	TopCulprits int
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MinCycles <= 0 {
		o.MinCycles = DefaultMinCycles
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	}
	if o.TopCulprits <= 0 {
		o.TopCulprits = 5
	}
}

// Side is one of the two sessions compared: its evidence and the diagnosis made from it.
type Side struct {
	Name string // as the user named it (a session directory)
	Ev   *evidence.Evidence
	D    *diagnose.Diagnosis
}

// Result is a comparison of two sessions: OLD (before) and NEW (after).
type Result struct {
	Schema string   `json:"schema"`
	Old    SideInfo `json:"old"`
	New    SideInfo `json:"new"`
	// Alpha is the significance level; SkipSeconds the start-up left out of each session.
	Alpha       float64 `json:"alpha"`
	MinChange   float64 `json:"min_change"`
	SkipSeconds float64 `json:"skip_seconds,omitempty"`
	// Test names the statistical test.
	Test     string    `json:"test"`
	Metrics  []Metric  `json:"metrics"`
	Findings Findings  `json:"findings"`
	Culprits *Culprits `json:"culprits,omitempty"`
	// Regression is true when a metric is significantly worse, or a finding at warning or
	// above is new: what --fail-on-regression fails on.
	Regression bool     `json:"regression"`
	Notes      []string `json:"notes,omitempty"`
}

// SideInfo describes one session of the comparison.
type SideInfo struct {
	Name    string    `json:"name"`
	Session string    `json:"session,omitempty"`
	Target  string    `json:"target,omitempty"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	// Env holds the GC settings the target ran with (GOGC, GOMEMLIMIT), when known.
	Env map[string]string `json:"env,omitempty"`
}

// Metric is one row: the figure in each session, the change, and whether it is significant.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Old and New are the figures over each session (the diagnosis summary's where it has
	// one; for the live-heap floor, the median of the intervals' floors); null = not measured.
	Old *float64 `json:"old"`
	New *float64 `json:"new"`
	// Change is (new - old) / old; null when old is 0 or either is unknown.
	Change *float64 `json:"change"`
	// PValue is the Mann-Whitney U test's over the intervals' values; null when there is too
	// little data to ever show a difference (Note says how much more is needed).
	PValue *float64 `json:"p_value"`
	// Significant: p below alpha, and the intervals' medians differ by at least the result's
	// MinChange and MinAbs (a smaller change is within the noise between two runs).
	Significant bool `json:"significant"`
	// MinAbs is the smallest absolute change of this metric that counts, in its unit.
	MinAbs float64 `json:"min_abs_change"`
	// Better says which way is an improvement: "lower" for every metric here.
	Better string `json:"better"`
	// Regression: significant, and the new values tend to be worse.
	Regression bool `json:"regression"`
	// IntervalSeconds is the intervals' length; IntervalsOld and IntervalsNew how many had a
	// value; MedianOld and MedianNew the medians of those values.
	IntervalSeconds float64  `json:"interval_seconds"`
	IntervalsOld    int      `json:"intervals_old"`
	IntervalsNew    int      `json:"intervals_new"`
	MedianOld       *float64 `json:"interval_median_old,omitempty"`
	MedianNew       *float64 `json:"interval_median_new,omitempty"`
	Note            string   `json:"note,omitempty"`
}

// Label is how tables name a metric ("GC cycles/s" for gc_per_second); the name itself when
// unknown.
func Label(name string) string {
	for _, m := range metrics {
		if m.name == name {
			return m.label
		}
	}
	return name
}

// TestName describes the statistics in reports.
const TestName = "Mann-Whitney U test (two-sided) over per-interval values"

// Compare compares two sessions metric by metric, their findings, and the heap profiles at
// their ends.
func Compare(oldS, newS Side, opts Options) *Result {
	opts.defaults()
	r := &Result{
		Schema: Schema, Old: sideInfo(oldS), New: sideInfo(newS), Alpha: opts.Alpha, MinChange: max(opts.MinChange, 0),
		SkipSeconds: opts.Skip.Seconds(), Test: TestName,
	}
	gcWidth := gcInterval(oldS, newS, opts)
	for _, m := range metrics {
		width := opts.Interval
		if m.gc {
			width = gcWidth
		}
		width = max(width, readingsWidth(m, oldS.Ev, newS.Ev))
		// Bound the work and memory on any session, however long (or corrupt its times):
		// past maxIntervals, intervals widen.
		if w := max(oldS.Ev.Window(), newS.Ev.Window()) / maxIntervals; w > width {
			width = w.Round(time.Second) + time.Second
		}
		r.Metrics = append(r.Metrics, compareMetric(m, oldS, newS, width, opts))
	}
	r.Findings = compareFindings(oldS.D, newS.D)
	r.Culprits, r.Notes = diffCulprits(oldS, newS, opts.TopCulprits, r.Notes)
	r.Notes = append(r.Notes, sideNotes("OLD", oldS, opts)...)
	r.Notes = append(r.Notes, sideNotes("NEW", newS, opts)...)
	if gcWidth > opts.Interval {
		r.Notes = append(r.Notes, fmt.Sprintf("GC figures are compared over intervals of %s, long enough for %d GC cycles", fmtDur(gcWidth), opts.MinCycles))
	}
	for _, m := range r.Metrics {
		r.Regression = r.Regression || m.Regression
	}
	for _, f := range r.Findings.New {
		r.Regression = r.Regression || f.New.Severity.Rank() >= diagnose.Warning.Rank()
	}
	return r
}

// gcInterval is the length of the intervals of quantities updated once per GC cycle: the
// interval, or longer when the busier session's GC runs so rarely that an interval would hold
// fewer than MinCycles cycles.
func gcInterval(a, b Side, opts Options) time.Duration {
	rate := math.Max(a.D.Summary.GCPerSecond, b.D.Summary.GCPerSecond)
	w := opts.Interval
	if rate > 0 {
		need := time.Duration(float64(opts.MinCycles) / rate * float64(time.Second))
		w = max(w, need.Round(time.Second))
	}
	return w
}

// readingsWidth is the shortest interval that holds two readings of a sampled series in both
// sessions (gctrace's cycles are the GC interval's business).
func readingsWidth(m metric, evs ...*evidence.Evidence) time.Duration {
	var w time.Duration
	for _, ev := range evs {
		if s := m.series(ev); s.Src != evidence.SourceGCTrace {
			w = max(w, (2 * s.Res.Step).Round(time.Second))
		}
	}
	return w
}

func compareMetric(m metric, oldS, newS Side, width time.Duration, opts Options) Metric {
	out := Metric{Name: m.name, Unit: m.unit, Better: "lower", IntervalSeconds: width.Seconds(), MinAbs: m.minAbs}
	var ov, nv []float64
	between := false
	if m.observed {
		// Between memdoctor's rounds when both sessions can be measured there, so that how
		// many rounds an interval holds does not decide; otherwise as any counter, both alike.
		ov = perInterval(m.betweenRounds(oldS.Ev, intervalCover), oldS, width, opts)
		nv = perInterval(m.betweenRounds(newS.Ev, intervalCover), newS, width, opts)
		between = len(ov) > 0 && len(nv) > 0 && MinP(len(ov), len(nv)) <= opts.Alpha
		if between && (hasSnapshots(oldS.Ev) || hasSnapshots(newS.Ev)) {
			out.Note = "measured between memdoctor's rounds: serving its profiles allocates in the target"
		}
	}
	if !between {
		ov, nv = perInterval(m.over, oldS, width, opts), perInterval(m.over, newS, width, opts)
	}
	out.IntervalsOld, out.IntervalsNew = len(ov), len(nv)
	if len(ov) > 0 {
		out.MedianOld = ptr(median(ov))
	}
	if len(nv) > 0 {
		out.MedianNew = ptr(median(nv))
	}
	out.Old, out.New = headline(m, between, oldS, ov, opts), headline(m, between, newS, nv, opts)
	if out.Old != nil && out.New != nil && *out.Old != 0 {
		out.Change = ptr((*out.New - *out.Old) / *out.Old)
	}
	switch {
	case len(ov) == 0 || len(nv) == 0:
		out.Note = fmt.Sprintf("too little data: no interval of %s with a value in %s", fmtDur(width), whichEmpty(ov, nv))
	case MinP(len(ov), len(nv)) > opts.Alpha:
		w1, w2 := Needed(len(ov), len(nv), opts.Alpha)
		out.Note = fmt.Sprintf("too little data: %d and %d intervals of %s can never show a difference at alpha %g (the smallest p-value is %.3g); need %d and %d",
			len(ov), len(nv), fmtDur(width), opts.Alpha, MinP(len(ov), len(nv)), w1, w2)
	default:
		t := MannWhitney(ov, nv)
		out.PValue = ptr(t.P)
		mo, mn := *out.MedianOld, *out.MedianNew
		d := math.Abs(mn - mo)
		big := d >= m.minAbs && (opts.MinChange < 0 || d >= opts.MinChange*math.Abs(mo))
		part := partOfCPU(m, oldS, newS, width, opts)
		material := m.partOf == nil || d*part >= m.minOfCPU
		out.Significant = t.P < opts.Alpha && big && material
		switch {
		case t.P < opts.Alpha && !big:
			out.Note = fmt.Sprintf("not counted: the medians differ by %s, under %s (the noise between two runs of one program)",
				changeOf(m.unit, d), noiseFloor(m, opts))
		case t.P < opts.Alpha && !material:
			out.Note = fmt.Sprintf("not counted: the medians differ by %s of a part that took %s of the CPU at most: %s of the CPU, under %s",
				changeOf(m.unit, d), FormatValue("fraction", part), changeOf("fraction", d*part), changeOf("fraction", m.minOfCPU))
		}
		// U counts the pairs in which OLD's value is the larger: below half of them, NEW's
		// values tend to be larger, which for a lower-is-better metric is worse.
		out.Regression = out.Significant && t.U < float64(t.N1*t.N2)/2
	}
	return out
}

// partOfCPU is the larger of the two sessions' medians of the share of the CPU the metric's
// part took (over the same intervals); when neither session measures it, the part counts as
// the whole CPU and the share's change alone decides (nothing unseen is waved away).
func partOfCPU(m metric, oldS, newS Side, width time.Duration, opts Options) float64 {
	if m.partOf == nil {
		return 1
	}
	share, seen := 0.0, false
	for _, s := range []Side{oldS, newS} {
		if v := perInterval(m.partOf, s, width, opts); len(v) > 0 {
			share, seen = max(share, median(v)), true
		}
	}
	if !seen {
		return 1
	}
	return share
}

// perInterval measures f over each of a session's intervals of width that has a value.
func perInterval(f measure, s Side, width time.Duration, opts Options) []float64 {
	return newGrid(s.Ev, opts.Skip, width).values(func(a, b time.Time) (float64, bool) { return f(s.Ev, a, b) })
}

// headline is a metric's figure over a whole session: the summary's, or when start-up is
// skipped (the summary covers it) the same quantity over the rest; the median of the
// intervals' values for a floor. A counter measured between memdoctor's rounds (between) is
// measured so over the whole session too.
func headline(m metric, between bool, s Side, vals []float64, opts Options) *float64 {
	if m.centre {
		if len(vals) == 0 {
			return nil
		}
		return ptr(median(vals))
	}
	if opts.Skip <= 0 && m.summary != nil && !between {
		if v, ok := m.summary(s.D.Summary, s.Ev); ok {
			return ptr(v)
		}
		return nil
	}
	a, b := s.Ev.Start.Add(opts.Skip), s.Ev.End
	if u := observedUntil(s.Ev, m.series(s.Ev)); u.Before(b) {
		b = u
	}
	if !b.After(a) {
		return nil
	}
	over := m.over
	if between {
		over = m.betweenRounds(s.Ev, wholeCover)
	}
	if v, ok := over(s.Ev, a, b); ok {
		return ptr(v)
	}
	return nil
}

// noiseFloor says what a change must exceed to count: "5 or 10%", "1.0 points or 10%".
func noiseFloor(m metric, opts Options) string {
	abs := changeOf(m.unit, m.minAbs)
	if opts.MinChange < 0 {
		return abs
	}
	return fmt.Sprintf("%s or %.0f%%", abs, opts.MinChange*100)
}

// changeOf writes a difference in a metric's unit: a difference of fractions in points.
func changeOf(unit string, d float64) string {
	if unit == "fraction" {
		return fmt.Sprintf("%.1f points", d*100)
	}
	return FormatValue(unit, d)
}

func whichEmpty(ov, nv []float64) string {
	switch {
	case len(ov) == 0 && len(nv) == 0:
		return "either session"
	case len(ov) == 0:
		return "OLD"
	}
	return "NEW"
}

func sideInfo(s Side) SideInfo {
	ev := s.Ev
	info := SideInfo{Name: s.Name, Session: ev.Session, Target: ev.Target.Name, Start: ev.Start, Seconds: ev.Seconds()}
	for k, v := range map[string]string{"GOGC": ev.Target.GOGC, "GOMEMLIMIT": ev.Target.GOMEMLIMIT} {
		if v != "" {
			if info.Env == nil {
				info.Env = map[string]string{}
			}
			info.Env[k] = v
		}
	}
	return info
}

// sideNotes says what a reader should know of one session: restarts left out, a start-up
// inside the first interval.
func sideNotes(which string, s Side, opts Options) []string {
	var out []string
	if n := len(s.Ev.Restarts); n > 0 {
		out = append(out, fmt.Sprintf("%s: the process restarted %d time(s); the intervals holding a restart are left out", which, n))
	}
	if st := s.Ev.Target.Started; opts.Skip == 0 && !st.IsZero() && st.After(s.Ev.Start.Add(-time.Second)) {
		out = append(out, fmt.Sprintf("%s: the session starts with the program's start-up; pass --skip to leave it out of the comparison", which))
	}
	return out
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ptr(v float64) *float64 { return &v }

func fmtDur(d time.Duration) string {
	if d%time.Second == 0 {
		return d.String()
	}
	return d.Round(100 * time.Millisecond).String()
}
