package diagnose

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Schema identifies the diagnosis JSON format.
const Schema = "memdoctor/diagnosis/v1"

// Kind is a finding kind. The set is closed: these ten.
type Kind string

// The finding kinds.
const (
	KindHeapLeak          Kind = "heap-leak"
	KindGoroutineLeak     Kind = "goroutine-leak"
	KindRuntimeRetention  Kind = "runtime-retention"
	KindTransientSpike    Kind = "transient-spike"
	KindGCOverhead        Kind = "gc-overhead"
	KindAllocationHotspot Kind = "allocation-hotspot"
	KindNonGoMemory       Kind = "non-go-memory"
	KindOOMRisk           Kind = "oom-risk"
	// KindMemoryGrowth: resident memory (or what the Go runtime holds) grows for good and no
	// other finding explains it; the breakdown says which part grows.
	KindMemoryGrowth Kind = "memory-growth"
	// KindCostGrowth: the allocation rate and the GC's work climb steadily: under steady load,
	// each request costs more and more.
	KindCostGrowth Kind = "cost-growth"
)

// Kinds lists every finding kind.
var Kinds = []Kind{
	KindHeapLeak, KindGoroutineLeak, KindRuntimeRetention, KindTransientSpike,
	KindGCOverhead, KindAllocationHotspot, KindNonGoMemory, KindOOMRisk,
	KindMemoryGrowth, KindCostGrowth,
}

// Confidence says how sure a finding is.
type Confidence string

// Confidences.
const (
	// Confirmed: the effect is large, consistent and seen over enough data to be beyond
	// reasonable doubt (or proved outright, as by the goroutineleak profile).
	Confirmed Confidence = "confirmed"
	// Suspected: the data points to it but does not yet prove it; the finding says how much
	// longer to watch (WatchMoreSeconds). A suspected finding is never above info.
	Suspected Confidence = "suspected"
)

// Severity says how much a finding matters. A critical finding is worth waking someone for.
type Severity string

// Severities, from most to least severe.
const (
	Critical Severity = "critical"
	Warning  Severity = "warning"
	Info     Severity = "info"
)

// Rank orders severities: critical 3, warning 2, info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Critical:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// ParseSeverity parses "critical", "warning" or "info".
func ParseSeverity(s string) (Severity, bool) {
	sev := Severity(s)
	return sev, sev.Rank() > 0
}

// Diagnosis is the result of diagnosing a session.
type Diagnosis struct {
	Schema    string    `json:"schema"`
	Generated time.Time `json:"generated"`
	Session   string    `json:"session,omitempty"`
	// Source says what collected the evidence: "run", "watch", "demo", "agent" (sessions),
	// "profiles" (folders of profiles and gctrace logs) or "prometheus".
	Source    string    `json:"source,omitempty"`
	Target    Target    `json:"target"`
	Window    Window    `json:"window"`
	Summary   Summary   `json:"summary"`
	Breakdown Breakdown `json:"breakdown"`
	Findings  []Finding `json:"findings"`
	// Snapshots describe the kinds of profile the evidence holds only one of: what that
	// profile shows at its instant, by the program's own code (never a trend).
	Snapshots []SnapshotView `json:"snapshots,omitempty"`
	// NotJudged lists the kinds of problem the data could not have shown, and why: "no
	// memory problem found" is said only when it is empty.
	NotJudged []NotJudged `json:"not_judged,omitempty"`
	// Limits are the slowest growths the rules that found nothing could have seen in this
	// window: a slower one may be there and not show yet.
	Limits []DetectionLimit `json:"detection_limits,omitempty"`
	// Notes are facts about the data a reader should know: what was missing, skipped or
	// estimated.
	Notes []string `json:"notes,omitempty"`
}

// DetectionLimit is the slowest growth of a quantity a rule would have reported over the
// window: the effect that matters (4 MiB and 10% of the live heap, for heap-leak) spread over
// the window's length.
type DetectionLimit struct {
	Kind Kind `json:"kind"`
	// PerMinute is the growth per minute, in the unit Unit names ("bytes", "goroutines").
	PerMinute float64 `json:"per_minute"`
	Unit      string  `json:"unit"`
}

// NotJudged is a kind of problem that could not be judged, and why.
type NotJudged struct {
	Kind   Kind   `json:"kind"`
	Reason string `json:"reason"`
	// WatchMoreSeconds is how much longer a session would need to judge it (0 = longer would
	// not help: a source is missing).
	WatchMoreSeconds float64 `json:"watch_more_seconds,omitempty"`
}

// Target describes what was watched.
type Target struct {
	PID        int      `json:"pid,omitempty"`
	Name       string   `json:"name,omitempty"`
	Command    []string `json:"command,omitempty"`
	GoVersion  string   `json:"go_version,omitempty"`
	MainModule string   `json:"main_module,omitempty"`
	PprofURL   string   `json:"pprof_url,omitempty"`
	AgentURL   string   `json:"agent_url,omitempty"`
	Local      bool     `json:"local"`
	Status     string   `json:"session_status,omitempty"`
}

// Window is the span the diagnosis covers.
type Window struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
}

// Summary holds the headline figures (see facts.Summary).
type Summary = facts.Summary

// Finding is one diagnosed problem.
type Finding struct {
	Kind       Kind       `json:"kind"`
	Severity   Severity   `json:"severity"`
	Confidence Confidence `json:"confidence"`
	// WatchMoreSeconds is, for a suspected finding, how much longer to watch to confirm or
	// dismiss it.
	WatchMoreSeconds float64 `json:"watch_more_seconds,omitempty"`
	Title            string  `json:"title"`
	Detail           string  `json:"detail"`
	// Evidence holds the numbers that prove the finding; each name carries its unit
	// (_bytes, _seconds, _per_second, _fraction, _count, ...).
	Evidence  map[string]float64 `json:"evidence"`
	Culprits  []Culprit          `json:"culprits,omitempty"`
	Advice    []string           `json:"advice,omitempty"`
	AdviceEnv map[string]string  `json:"advice_env,omitempty"`
	// Start and End place the finding on the timeline, when it has a time span.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Profiles names the stored snapshots the finding compares (old, new), so a reader can
	// dig further with go tool pprof -diff_base.
	Profiles []string `json:"profiles,omitempty"`
	// Snapshot is true when the finding rests on a single profile: what it held at one
	// instant, not a trend. Such a finding is always suspected; a second profile taken
	// minutes later confirms or dismisses it.
	Snapshot bool `json:"snapshot,omitempty"`
}

// Culprit is a piece of the program's own code that a finding blames.
type Culprit struct {
	Function string   `json:"function"`
	File     string   `json:"file,omitempty"`
	Line     int64    `json:"line,omitempty"`
	Bytes    int64    `json:"bytes,omitempty"`
	Count    int64    `json:"count,omitempty"`
	Share    float64  `json:"share"`
	Stack    []string `json:"stack,omitempty"`
	// Own is false when no frame outside the runtime and standard library was found.
	Own bool `json:"own"`
}

// MaxSeverity returns the most severe finding's severity ("" when there is none).
func (d *Diagnosis) MaxSeverity() Severity {
	var max Severity
	for _, f := range d.Findings {
		if f.Severity.Rank() > max.Rank() {
			max = f.Severity
		}
	}
	return max
}
