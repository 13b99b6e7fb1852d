package rule

import (
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// RetentionCase is resident memory far above what the live heap explains, because the runtime
// keeps freed pages or the kernel has not reclaimed MADV_FREE pages.
type RetentionCase struct {
	// At is the split it is told at: the last one that shows it.
	At *facts.Split
	// Lazy is true when most of it is released memory still resident (LazyFree).
	Lazy bool
	// Retained is what is kept at At; Peak the most kept at any split.
	Retained, Peak float64
	// Hits of Splits splits showed it; ComesAndGoes is true when the last did not.
	Hits, Splits int
	ComesAndGoes bool
	// Spikes is how many allocation spikes it is kept between (0 when not said).
	Spikes int
	Budget uint64
	// GoVersion and GODEBUG are the target's.
	GoVersion, GODEBUG string
}

// runtimeRetention reports resident memory far above what the live heap and the GC goal
// explain because the runtime keeps freed pages (heap free, not yet scavenged) or the kernel
// has not reclaimed MADV_FREE pages (LazyFree). It is not a leak.
func runtimeRetention(fs *facts.Facts, th *Thresholds) outcome {
	rt := &th.Retention
	if fs.Aligned == 0 {
		return cannot(KindRuntimeRetention, WhyNotSplit, 0)
	}
	ret, share := fs.Retained.Points, fs.RetainedShare.Points
	if len(ret) < 3 || len(ret) != len(share) {
		return outcome{unjudged: &Unjudged{Kind: KindRuntimeRetention, Why: WhyTooFew, WatchMoreSeconds: (3 * time.Second).Seconds(), N: fs.Aligned}}
	}
	shows := func(i int) bool { return ret[i].V >= rt.MinBytes && share[i].V >= rt.MinShare }
	// It is judged from the first split that shows it: memory freed and kept is a state that
	// begins when the first burst is freed, and the readings before (a start-up, a first batch
	// slowed by a busy machine) say nothing against it.
	onset := 0
	for onset < len(ret) && !shows(onset) {
		onset++
	}
	hits, worst := 0, 0.0
	var worstAt time.Time
	for i := onset; i < len(ret); i++ {
		if shows(i) {
			hits++
			if ret[i].V > worst {
				worst, worstAt = ret[i].V, ret[i].T
			}
		}
	}
	if hits == 0 || float64(hits) < rt.MinPresent*float64(len(ret)-onset) {
		return outcome{}
	}
	// Whether it is free heap or released pages still resident is what most of the splits
	// that show it say: one split can catch memory between the two (a batch's pages freed by
	// a GC and not yet released), which is not what the memory is kept as.
	lazy := lazyMostly(fs.Splits, ret[onset].T, rt)
	// Begun after the window's start, it needs a few readings; and free heap must have been
	// kept MinSpan, or it may be a spike's pages on their way back to the OS (pages already
	// released, still resident, are the kernel's to take: the runtime does nothing more).
	span := ret[len(ret)-1].T.Sub(ret[onset].T)
	if onset > 0 && (hits < 3 || !lazy && span < rt.MinSpan) {
		return outcome{}
	}
	// Tell it at the last split that shows it: retention that comes and goes (batches freed
	// and reclaimed) is still retention.
	last := fs.LastSplit
	if last == nil {
		return outcome{}
	}
	lastR := float64(last.RetainedFreeBytes + last.ReleasedResidentBytes)
	comesAndGoes := lastR < rt.MinBytes || lastR < rt.MinShare*float64(last.RSSBytes)
	if comesAndGoes {
		for i := len(fs.Splits) - 1; i >= 0; i-- {
			if a := &fs.Splits[i]; a.GoSource != "" && a.Time.Equal(worstAt) {
				last = a
				break
			}
		}
	} else if a := lastOfKind(fs.Splits, lazy, rt); a != nil {
		last = a
	}
	lastR = float64(last.RetainedFreeBytes + last.ReleasedResidentBytes)
	c := &RetentionCase{
		At: last, Lazy: lazy, Retained: lastR, Peak: worst,
		Hits: hits, Splits: len(ret) - onset, ComesAndGoes: comesAndGoes, Budget: fs.Budget,
		GoVersion: fs.Target.GoVersion, GODEBUG: fs.Target.GODEBUG,
	}
	v := Verdict{Kind: KindRuntimeRetention, Severity: Warning, Confidence: Confirmed, Start: ret[onset].T, End: last.Time, Case: c}
	// Few splits make it a suspicion, unless a few showed it over MinSpan (a busy machine
	// reads the runtime's figures seldom).
	if len(ret)-onset < rt.MinReadings && (hits < 3 || span < rt.MinSpan) {
		v.Confidence, v.WatchMoreSeconds = Suspected, 5*fs.Retained.Res.Step.Seconds()
	}
	if len(fs.Spikes) > 0 && !c.Lazy {
		v.Severity = Info
		c.Spikes = len(fs.Spikes)
	}
	return outcome{verdicts: []Verdict{v}}
}

// keptSplit reports whether a split shows retention: enough free heap and released pages still
// resident, as a share of RSS.
func keptSplit(a *facts.Split, rt *Retention) bool {
	r := float64(a.RetainedFreeBytes + a.ReleasedResidentBytes)
	return a.GoSource != "" && r >= rt.MinBytes && r >= rt.MinShare*float64(a.RSSBytes)
}

// lazyMostly reports whether, in most of the splits from onset on that show retention, the
// released pages still resident (LazyFree) outweigh the free heap.
func lazyMostly(splits []facts.Split, onset time.Time, rt *Retention) bool {
	lazy, kept := 0, 0
	for i := range splits {
		if a := &splits[i]; !a.Time.Before(onset) && keptSplit(a, rt) {
			kept++
			if a.ReleasedResidentBytes >= a.RetainedFreeBytes {
				lazy++
			}
		}
	}
	return kept > 0 && 2*lazy >= kept
}

// lastOfKind is the last split that shows retention of the kind most splits show (nil when
// none).
func lastOfKind(splits []facts.Split, lazy bool, rt *Retention) *facts.Split {
	for i := len(splits) - 1; i >= 0; i-- {
		if a := &splits[i]; keptSplit(a, rt) && (a.ReleasedResidentBytes >= a.RetainedFreeBytes) == lazy {
			return a
		}
	}
	return nil
}
