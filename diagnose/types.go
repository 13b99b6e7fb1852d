package diagnose

import (
	"time"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/diagnose/words"
	"github.com/memdoctor/memdoctor/facts"
)

// Schema identifies the diagnosis JSON format.
const Schema = "memdoctor/diagnosis/v1"

// The verdicts' vocabulary is the rules' (package diagnose/rule), their words the words
// layer's (package diagnose/words), the headline figures the facts' (package facts): named
// here, so that the diagnosis's contract reads in one place.
type (
	// Kind is a finding kind. The set is closed: these ten.
	Kind = rule.Kind
	// Confidence says how sure a finding is.
	Confidence = rule.Confidence
	// Severity says how much a finding matters.
	Severity = rule.Severity
	// Culprit is a piece of the program's own code that a finding blames.
	Culprit = rule.Culprit
	// DetectionLimit is the slowest growth of a quantity a rule would have reported over
	// the window.
	DetectionLimit = rule.DetectionLimit
	// SnapshotView is what one profile shows at the instant it was taken.
	SnapshotView = rule.SnapshotView
	// SnapshotPattern is a known allocation pattern that an allocating site goes through.
	SnapshotPattern = rule.SnapshotPattern
	// GoroutineSite is the goroutines waiting at one site of the program.
	GoroutineSite = rule.GoroutineSite
	// Finding is one diagnosed problem.
	Finding = words.Finding
	// NotJudged is a kind of problem that could not be judged, and why.
	NotJudged = words.NotJudged
	// Summary holds the headline figures.
	Summary = facts.Summary
)

// The finding kinds.
const (
	KindHeapLeak          = rule.KindHeapLeak
	KindGoroutineLeak     = rule.KindGoroutineLeak
	KindRuntimeRetention  = rule.KindRuntimeRetention
	KindTransientSpike    = rule.KindTransientSpike
	KindGCOverhead        = rule.KindGCOverhead
	KindAllocationHotspot = rule.KindAllocationHotspot
	KindNonGoMemory       = rule.KindNonGoMemory
	KindOOMRisk           = rule.KindOOMRisk
	KindMemoryGrowth      = rule.KindMemoryGrowth
	KindCostGrowth        = rule.KindCostGrowth
)

// Kinds lists every finding kind.
var Kinds = rule.Kinds

// Confidences, and severities from most to least severe.
const (
	Confirmed = rule.Confirmed
	Suspected = rule.Suspected
	Critical  = rule.Critical
	Warning   = rule.Warning
	Info      = rule.Info
)

// ParseSeverity parses "critical", "warning" or "info".
func ParseSeverity(s string) (Severity, bool) { return rule.ParseSeverity(s) }

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

// Target describes what was watched, in the v1 JSON form: what targetOf takes of the
// evidence's target (evidence.Target, which is the manifest's session.Target) and of its
// session. It is derived, never read back.
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
