package words

import (
	"fmt"
	"strings"
	"time"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// Finding is one diagnosed problem, as the diagnosis JSON (memdoctor/diagnosis/v1) and the
// reports say it.
type Finding struct {
	Kind       rule.Kind       `json:"kind"`
	Severity   rule.Severity   `json:"severity"`
	Confidence rule.Confidence `json:"confidence"`
	// WatchMoreSeconds is, for a suspected finding, how much longer to watch to confirm or
	// dismiss it.
	WatchMoreSeconds float64 `json:"watch_more_seconds,omitempty"`
	Title            string  `json:"title"`
	Detail           string  `json:"detail"`
	// Evidence holds the numbers that prove the finding; each name carries its unit
	// (_bytes, _seconds, _per_second, _fraction, _count, ...).
	Evidence  map[string]float64 `json:"evidence"`
	Culprits  []rule.Culprit     `json:"culprits,omitempty"`
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
	// AwaitsGC is true when more readings of the live heap would settle the finding (a heap
	// leak suspected, a burst no GC was seen after): only the target's GC makes them, and a GC
	// asked of it makes one at once (watch --until-confirmed asks its pprof for one).
	AwaitsGC bool `json:"awaits_gc,omitempty"`
}

// NotJudged is a kind of problem that could not be judged, and why.
type NotJudged struct {
	Kind   rule.Kind `json:"kind"`
	Reason string    `json:"reason"`
	// WatchMoreSeconds is how much longer a session would need to judge it (0 = longer would
	// not help: a source is missing).
	WatchMoreSeconds float64 `json:"watch_more_seconds,omitempty"`
	// AwaitsGC is true when readings of the live heap, which only the target's GC makes, would
	// let it be judged (Finding.AwaitsGC).
	AwaitsGC bool `json:"awaits_gc,omitempty"`
}

// Said is a judgment in words.
type Said struct {
	Findings  []Finding
	NotJudged []NotJudged
	// Notes are the rules' notes, in the order they stated them.
	Notes []string
	// Views are the snapshot views, their patterns' advice filled.
	Views []rule.SnapshotView
}

// Say puts a judgment on the facts into words.
func Say(j rule.Judgment, fs *facts.Facts) Said {
	var s Said
	for _, v := range j.Verdicts {
		s.Findings = append(s.Findings, finding(v, fs))
	}
	for _, u := range j.Unjudged {
		s.NotJudged = append(s.NotJudged, NotJudged{Kind: u.Kind, Reason: reason(u, fs) + gcWaitWords(u.Waits, ""), WatchMoreSeconds: u.WatchMoreSeconds, AwaitsGC: u.Waits != nil})
	}
	for _, n := range j.Notes {
		s.Notes = append(s.Notes, note(n, fs))
	}
	for _, v := range j.Views {
		for i := range v.Patterns {
			v.Patterns[i].Advice = patternAdvice[v.Patterns[i].Name].hotspot
		}
		s.Views = append(s.Views, v)
	}
	return s
}

// finding says one verdict.
func finding(v rule.Verdict, fs *facts.Facts) Finding {
	f := Finding{
		Kind: v.Kind, Severity: v.Severity, Confidence: v.Confidence, WatchMoreSeconds: v.WatchMoreSeconds,
		Evidence: map[string]float64{}, Culprits: v.Culprits, Start: v.Start, End: v.End, Profiles: v.Profiles, Snapshot: v.Snapshot,
	}
	switch c := v.Case.(type) {
	case *rule.HeapLeakCase:
		heapLeak(&f, c, fs)
	case *rule.SiteLeakCase:
		siteLeak(&f, c, fs)
	case *rule.GoroutineLeakCase:
		goroutineLeak(&f, c)
	case *rule.PileUpCase:
		pileUp(&f, c)
	case *rule.RetentionCase:
		retention(&f, c)
	case *rule.SpikeCase:
		spike(&f, v, c)
	case *rule.GCCase:
		gcOverhead(&f, c, fs)
	case *rule.HotspotCase:
		hotspot(&f, c)
	case *rule.SnapshotHotspotCase:
		snapshotHotspot(&f, c)
	case *rule.NonGoCase:
		nonGo(&f, c)
	case *rule.OOMCase:
		oomRisk(&f, c)
	case *rule.OOMKillCase:
		oomKill(&f, c)
	case *rule.MemoryCase:
		memoryGrowth(&f, c)
	case *rule.CostCase:
		costGrowth(&f, c)
	case *rule.BurstCase:
		burst(&f, c, fs.Mode)
	default:
		panic(fmt.Sprintf("words: no words for a %T verdict", v.Case))
	}
	if v.Waits != nil {
		f.AwaitsGC = true
		f.Detail += gcWaitWords(v.Waits, " ")
	}
	return f
}

// gcWaitWords says, after sep, that a verdict waits on the target's GC, when its GC runs
// seldom enough for that to set the wait ("" otherwise).
func gcWaitWords(w *rule.GCWait, sep string) string {
	if w == nil || w.Every <= 0 {
		return ""
	}
	if sep == "" {
		return fmt.Sprintf("; the live heap is read only when the GC runs, about every %s here: the verdict waits on its cycles", humanDuration(w.Every.Seconds()))
	}
	return fmt.Sprintf("%sThe live heap is read only when the GC runs, about every %s here: the verdict waits on its cycles.", sep, humanDuration(w.Every.Seconds()))
}

// risingWord says whether a growth is still rising at the end.
func risingWord(r rule.Rise) string {
	if r.StillRising {
		return "still rising"
	}
	return "rising more slowly"
}

// notYet is what a suspected finding adds: how much longer to watch.
func notYet(watchMore time.Duration) string {
	return fmt.Sprintf(" Not yet proved: watch about %s more to confirm or dismiss it.", humanDuration(watchMore.Seconds()))
}

// shellWord quotes s for a POSIX shell when it needs it (a method's name has parentheses and
// a star).
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pprofDiffCommand is the go tool pprof command that shows what a finding compares.
func pprofDiffCommand(typ, old, new string) string {
	return fmt.Sprintf("go tool pprof -sample_index=%s -diff_base %s %s", typ, old, new)
}

// orGap returns the gap's reason, else the fallback.
func orGap(gap, fallback string) string {
	if gap != "" {
		return gap
	}
	return fallback
}
