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
	hits, worst := 0, 0.0
	var worstAt time.Time
	for i := range ret {
		if ret[i].V >= rt.MinBytes && share[i].V >= rt.MinShare {
			hits++
			if ret[i].V > worst {
				worst, worstAt = ret[i].V, ret[i].T
			}
		}
	}
	if float64(hits) < rt.MinPresent*float64(len(ret)) {
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
		lastR = float64(last.RetainedFreeBytes + last.ReleasedResidentBytes)
	}
	c := &RetentionCase{
		At: last, Lazy: last.ReleasedResidentBytes >= last.RetainedFreeBytes, Retained: lastR, Peak: worst,
		Hits: hits, Splits: len(ret), ComesAndGoes: comesAndGoes, Budget: fs.Budget,
		GoVersion: fs.Target.GoVersion, GODEBUG: fs.Target.GODEBUG,
	}
	v := Verdict{Kind: KindRuntimeRetention, Severity: Warning, Confidence: Confirmed, Start: ret[0].T, End: last.Time, Case: c}
	if len(ret) < rt.MinReadings {
		v.Confidence, v.WatchMoreSeconds = Suspected, 5*fs.Retained.Res.Step.Seconds()
	}
	if len(fs.Spikes) > 0 && !c.Lazy {
		v.Severity = Info
		c.Spikes = len(fs.Spikes)
	}
	return outcome{verdicts: []Verdict{v}}
}
