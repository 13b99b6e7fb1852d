package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

// snapshotWhy is why one heap profile does not tell what allocation costs.
const snapshotWhy = "one heap profile: its allocation is counted since the program started, so its rate, and what it costs in GC work, are unknown (give two heap profiles minutes apart, and a gctrace log)"

// reason says why a rule could not judge.
func reason(u rule.Unjudged, fs *facts.Facts) string {
	gap := func(q string) string { return fs.Gaps[q] }
	span, need := humanDuration(u.Span.Seconds()), humanDuration(u.Need.Seconds())
	switch u.Kind {
	case rule.KindHeapLeak:
		switch u.Why {
		case rule.WhyNeverMeasured:
			return "the live heap was never measured: " + gap(facts.GapLive)
		case rule.WhyOneSnapshot:
			return "one heap profile is a snapshot: it shows what the heap held then (its top retainers are listed), " +
				"not whether it grows; give two or more heap profiles taken minutes apart"
		case rule.WhyTooFew:
			return fmt.Sprintf("%d distinct reading(s) of the live heap over %s (of %d taken): a trend needs 3 over %s or more", u.N, span, int(u.Value), need)
		case rule.WhyEndUnseen:
			return endUnseenReason("the live heap", u, span)
		case rule.WhyInBursts:
			return fmt.Sprintf("%d of the %d distinct readings of the live heap were taken inside allocation bursts (the GC ran during them, "+
				"starting as they allocated), which leaves too few between bursts for a trend: whether the heap comes back after a burst is not known "+
				"until a GC runs between them", u.N, int(u.Value))
		}
	case rule.KindGoroutineLeak:
		switch u.Why {
		case rule.WhyNeverMeasured:
			return "goroutines were never counted: " + gap(facts.GapGoroutines)
		case rule.WhyOneSnapshot:
			return fmt.Sprintf("one goroutine profile is a snapshot: no blocked site of the program holds %s of its goroutines "+
				"and %d or more (its sites are listed); whether they pile up needs two or more profiles taken minutes apart", pct(u.Value), u.N)
		case rule.WhyTooFew:
			return fmt.Sprintf("%d goroutine count(s) over %s: a trend needs %s or more", u.N, span, need)
		case rule.WhyEndUnseen:
			return endUnseenReason("the goroutines", u, span)
		}
	case rule.KindRuntimeRetention, rule.KindNonGoMemory:
		switch u.Why {
		case rule.WhyNotSplit:
			return "memory could not be split: " + gap(facts.GapAligned)
		case rule.WhyNeverMeasured:
			return "memory outside Go could not be measured: " + gap(facts.GapNonGo)
		case rule.WhyTooFew:
			return fmt.Sprintf("memory was split %d time(s): too few to judge", u.N)
		}
	case rule.KindTransientSpike:
		switch u.Why {
		case rule.WhyTooFew:
			return fmt.Sprintf("the live heap was read %d time(s): %s", u.N, orGap(gap(facts.GapLive), "too few readings to see a burst"))
		case rule.WhyTooSparse:
			return fmt.Sprintf("the live heap was read every %s (%s): bursts shorter than that cannot be seen; run the program under memdoctor run (gctrace) or embed the agent", span, spikeSeriesWhat(fs.SpikeSeries))
		}
	case rule.KindGCOverhead:
		switch u.Why {
		case rule.WhyNeverMeasured:
			return "GC cycles were not counted: " + gap(facts.GapGC)
		case rule.WhyCPUUnknown:
			return fmt.Sprintf("the GC runs %.1f times per second but its CPU cost is unknown: %s", u.Value, gap(facts.GapGCCPU))
		}
	case rule.KindAllocationHotspot:
		return hotspotReason(u, gap)
	case rule.KindOOMRisk:
		switch u.Why {
		case rule.WhyNoBudget:
			return gap(facts.GapBudget) + ": pass --memory-budget"
		case rule.WhyTooFew:
			return fmt.Sprintf("resident memory was read %d time(s): %s", u.N, orGap(gap(facts.GapRSS), "too few"))
		}
	case rule.KindMemoryGrowth:
		switch u.Why {
		case rule.WhyNeverMeasured:
			return "resident memory was never read: " + gap(facts.GapRSS)
		case rule.WhyTooFew:
			return fmt.Sprintf("%d reading(s) of %s over %s: a trend needs %s or more", u.N, memoryWhat(fs.Resident.Runtime), span, need)
		}
	case rule.KindCostGrowth:
		switch u.Why {
		case rule.WhyTooFew:
			return fmt.Sprintf("allocation was counted %d time(s): %s", u.N, orGap(gap(facts.GapLive), "too few to follow its rate"))
		case rule.WhyTooShort:
			return fmt.Sprintf("the allocation rate was followed over %s: a trend needs %s or more", span, need)
		}
	}
	return fmt.Sprintf("not judged (%s, reason %d)", u.Kind, u.Why)
}

// endUnseenReason says that what was read did not grow, and that the window's end went unseen.
func endUnseenReason(what string, u rule.Unjudged, span string) string {
	return fmt.Sprintf("%s did not grow over %d reading(s) in %s, and then went unread for the window's last %s "+
		"(the source stopped answering: see the notes): what happened then is not known", what, u.N, span, humanDuration(u.Value))
}

func hotspotReason(u rule.Unjudged, gap func(string) string) string {
	switch u.Why {
	case rule.WhyNeverMeasured:
		return gap(facts.GapHeapSnaps)
	case rule.WhyTooShort:
		return fmt.Sprintf("the heap snapshots span %s: allocation is compared over %ds or more", humanDuration(u.Value), int(u.Need.Seconds()))
	case rule.WhyCPUUnknown:
		return fmt.Sprintf("what allocation costs is unknown: the GC's CPU time was not measured (%s)", gap(facts.GapGCCPU))
	case rule.WhyProfileError:
		return fmt.Sprintf("the heap snapshots could not be compared: %v", u.Err)
	case rule.WhyOneSnapshot:
		return fmt.Sprintf("%s: %v", snapshotWhy, u.Err)
	case rule.WhyOneSnapshotNoSite:
		return fmt.Sprintf("%s; no site allocated more than %s of the bytes", snapshotWhy, pct(u.Value))
	case rule.WhyOneSnapshotNoPattern:
		return fmt.Sprintf("%s; %s allocated %s of the bytes, through no pattern memdoctor knows", snapshotWhy, u.Site, pct(u.Value))
	}
	return fmt.Sprintf("not judged (%s, reason %d)", u.Kind, u.Why)
}

// note says what a rule noted.
func note(n rule.Note, fs *facts.Facts) string {
	switch n.What {
	case rule.NoteCameBack:
		return fmt.Sprintf("heap-leak: the live heap's lows rose from %s, but it came back to %s at %s, in the window's last third: "+
			"what a leak holds stays live, so what rose was in flight (requests, bursts), not held", bytesStr(n.From), bytesStr(n.To), humanDuration(n.At.Seconds()))
	case rule.NoteDetectionLimit:
		return fmt.Sprintf("heap-leak: the live heap did not grow for good over %s; a leak slower than about %s/min would not show yet in a window this long",
			humanDuration(n.Span.Seconds()), bytesStr(n.Rate))
	case rule.NoteNoProfilePair:
		if n.Kind == rule.KindTransientSpike {
			return "transient-spike: no heap snapshots around the spikes to say what was allocated (shorten --interval)"
		}
		return fmt.Sprintf("heap-leak: no pair of heap profiles to name the growing allocation sites (%s)", fs.Gaps[facts.GapHeapSnaps])
	case rule.NoteProfileError:
		return fmt.Sprintf("%s: %v", n.Kind, n.Err)
	case rule.NoteNoModel:
		return fmt.Sprintf("gc-overhead: the GC runs %.1f/s but the live heap or the allocation rate is unknown: no advice", n.Rate)
	case rule.NoteSnapshotError:
		return fmt.Sprintf("snapshot: %v", n.Err)
	}
	return fmt.Sprintf("%s: note %d", n.Kind, n.What)
}
