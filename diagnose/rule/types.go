package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

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

// Kinds lists every finding kind, in the order the rules run.
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
	// HeldBy is, for a heap leak's culprit, who keeps the objects it allocated alive: the
	// reference paths from the GC roots, as memdoctor read them from the process's heap
	// (nil when the heap was not read, or the reading had no such culprit).
	HeldBy *facts.CulpritHolders `json:"held_by,omitempty"`
	// Sites is, for the function that growing sites share rather than a site, how many of
	// them are under it: its Bytes are theirs (what grew under it, as pprof's -cum counts).
	Sites int `json:"sites,omitempty"`
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

// Verdict is one problem a rule found: its kind, severity and confidence, when it happened,
// what it blames, and the rule's own figures (Case, one type per way a rule decides: see
// cases.go), which the words layer turns into a finding's title, detail, advice and
// evidence.
type Verdict struct {
	Kind       Kind
	Severity   Severity
	Confidence Confidence
	// WatchMoreSeconds is, for a suspected verdict, how much longer to watch to confirm or
	// dismiss it.
	WatchMoreSeconds float64
	// Start and End place it on the timeline, when it has a time span.
	Start, End time.Time
	Culprits   []Culprit
	// Profiles names the stored snapshots it compares (old, new).
	Profiles []string
	// Snapshot is true when it rests on a single profile.
	Snapshot bool
	// Waits is set when more readings of the live heap would settle the verdict (a heap leak
	// suspected, a burst no GC was seen after): only the target's GC makes them.
	Waits *GCWait
	Case  any
}

// GCWait says that a verdict waits on readings of the live heap, which only the target's GC
// makes: a GC asked of it now (watch --until-confirmed, through its pprof) gives one at once.
type GCWait struct {
	// Every is how often the target's own GC ran over the window, when that is what sets the
	// wait (HeapLeak.SlowGC or more); 0 otherwise.
	Every time.Duration
}

// settle keeps a verdict's severity and confidence in step: a suspected verdict is never
// above info, and an unset confidence means confirmed.
func (v *Verdict) settle() {
	if v.Confidence == "" {
		v.Confidence = Confirmed
	}
	if v.Confidence == Suspected && v.Severity.Rank() > Info.Rank() {
		v.Severity = Info
	}
	if v.Confidence == Confirmed {
		v.WatchMoreSeconds = 0
	}
}

// Unjudged is a kind of problem a rule could not judge: Why says which reason, and the
// figures it gives (see the Why constants).
type Unjudged struct {
	Kind Kind
	Why  Why
	// WatchMoreSeconds is how much longer a session would need to judge it (0 = longer would
	// not help: a source is missing).
	WatchMoreSeconds float64
	N                int           // readings, splits, goroutines
	Span             time.Duration // what the readings span
	Need             time.Duration // what they would need to span
	Value            float64       // a rate, a share, seconds
	Site             string        // a function
	Err              error
	// Waits is set when readings of the live heap, which only the target's GC makes, would
	// let it be judged (see Verdict.Waits).
	Waits *GCWait
}

// Note is a fact about the data a rule states beside its verdict: What says which, with its
// figures.
type Note struct {
	Kind Kind
	What NoteWhat
	Err  error
	// Figures, where the note gives them.
	From, To float64
	At, Span time.Duration
	Rate     float64
}

// Judgment is what the rules concluded on one set of facts.
type Judgment struct {
	// Verdicts, most severe and most sure first.
	Verdicts []Verdict
	// Unjudged lists, in the order of Kinds, the kinds that could not be judged.
	Unjudged []Unjudged
	// Limits are the slowest growths the rules that found nothing could have seen.
	Limits []DetectionLimit
	// Notes, in the order the rules stated them.
	Notes []Note
	// Views describe the kinds of profile the facts hold only one of.
	Views []SnapshotView
}
