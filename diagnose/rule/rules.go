package rule

import (
	"cmp"
	"slices"

	"github.com/memdoctor/memdoctor/facts"
)

// rules is the rule set, one per finding kind, in the order of Kinds: the order Judge runs
// them in. Each lives in its own file and is a pure function of the facts.
var rules = []struct {
	kind  Kind
	judge func(*facts.Facts, *Thresholds) outcome
}{
	{KindHeapLeak, heapLeak},
	{KindGoroutineLeak, goroutineLeak},
	{KindRuntimeRetention, runtimeRetention},
	{KindTransientSpike, transientSpike},
	{KindGCOverhead, gcOverhead},
	{KindAllocationHotspot, allocationHotspot},
	{KindNonGoMemory, nonGoMemory},
	{KindOOMRisk, oomRisk},
	{KindMemoryGrowth, memoryGrowth},
	{KindCostGrowth, costGrowth},
}

// outcome is what one rule concludes: its verdicts, or why it could not judge, with what it
// notes and the slowest growth it could have missed.
type outcome struct {
	verdicts []Verdict
	unjudged *Unjudged
	notes    []Note
	limits   []DetectionLimit
}

// cannot is an outcome that could not judge kind, for a reason that needs no figures.
func cannot(kind Kind, why Why, watchMoreSeconds float64) outcome {
	return outcome{unjudged: &Unjudged{Kind: kind, Why: why, WatchMoreSeconds: watchMoreSeconds}}
}

// Judge runs every rule on the facts, then makes the verdicts agree with each other and
// orders them, most severe and most sure first.
func Judge(fs *facts.Facts, th *Thresholds) Judgment {
	var j Judgment
	for _, r := range rules {
		o := r.judge(fs, th)
		for i := range o.verdicts {
			o.verdicts[i].settle()
		}
		j.Verdicts = append(j.Verdicts, o.verdicts...)
		if o.unjudged != nil {
			j.Unjudged = append(j.Unjudged, *o.unjudged)
		}
		j.Notes = append(j.Notes, o.notes...)
		j.Limits = append(j.Limits, o.limits...)
	}
	views, notes := snapshotViews(fs, th)
	j.Views = views
	j.Notes = append(j.Notes, notes...)
	j.Verdicts = reconcile(j.Verdicts, th)
	slices.SortStableFunc(j.Verdicts, func(a, b Verdict) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(confRank(b.Confidence), confRank(a.Confidence)))
	})
	return j
}

func confRank(c Confidence) int {
	if c == Confirmed {
		return 1
	}
	return 0
}

// Of returns the verdict of a kind, nil when there is none.
func Of(vs []Verdict, k Kind) *Verdict {
	for i := range vs {
		if vs[i].Kind == k {
			return &vs[i]
		}
	}
	return nil
}

// Why says why a rule could not judge.
type Why int

// The reasons a rule could not judge, with the Unjudged figures each gives.
const (
	// WhyNeverMeasured: the quantity the rule judges was never measured (the facts' gap says
	// why).
	WhyNeverMeasured Why = iota + 1
	// WhyOneSnapshot: one profile is a snapshot, not a trend (Err: its allocation could not
	// be read, for allocation-hotspot; Value and N: the share and count of goroutines a
	// pile-up would hold, for goroutine-leak).
	WhyOneSnapshot
	// WhyOneSnapshotNoSite: no site of the only heap profile allocated Value (a share) of it.
	WhyOneSnapshotNoSite
	// WhyOneSnapshotNoPattern: Site allocated Value (a share) of the only heap profile,
	// through no known pattern.
	WhyOneSnapshotNoPattern
	// WhyTooFew: N readings (over Span; Value, when given, readings taken) are too few; a
	// trend needs Need.
	WhyTooFew
	// WhyTooShort: the readings span too little (Span, or Value seconds for the snapshots
	// allocation-hotspot compares; they would need Need).
	WhyTooShort
	// WhyTooSparse: readings Span apart cannot see what the rule looks for.
	WhyTooSparse
	// WhyNotSplit: memory could not be split into its parts.
	WhyNotSplit
	// WhyCPUUnknown: the GC's CPU was not measured (Value: its rate, when known).
	WhyCPUUnknown
	// WhyNoBudget: no memory budget is known.
	WhyNoBudget
	// WhyProfileError: the profiles could not be compared (Err).
	WhyProfileError
	// WhyInBursts: N of the Value readings of the live heap were taken inside allocation
	// bursts (the GC ran during them), which left too few between bursts to judge a trend;
	// whether the heap comes back after a burst is not known until a GC runs between them.
	WhyInBursts
	// WhyEndUnseen: N readings over Span showed no growth, and then none came for the window's
	// last Value seconds (the source stopped answering: the notes say what failed); what
	// happened then is not known.
	WhyEndUnseen
)

// NoteWhat says which note a rule states.
type NoteWhat int

// The notes, with the Note figures each gives.
const (
	// NoteCameBack: the live heap's lows rose From, but it came back To at At into the window,
	// in its last third.
	NoteCameBack NoteWhat = iota + 1
	// NoteDetectionLimit: no growth over Span; a leak slower than Rate per minute would not
	// show.
	NoteDetectionLimit
	// NoteNoProfilePair: no pair of profiles to name the culprits.
	NoteNoProfilePair
	// NoteProfileError: profiles could not be read (Err).
	NoteProfileError
	// NoteNoModel: the GC runs Rate times a second but the pacer cannot be modelled.
	NoteNoModel
	// NoteSnapshotError: a single profile could not be described (Err).
	NoteSnapshotError
)
