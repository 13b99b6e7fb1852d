package rule

import (
	"cmp"
	"math"
	"slices"

	"github.com/memdoctor/memdoctor/facts"
)

// reconcile makes the verdicts agree with each other: a verdict that another explains is
// dropped, so that one problem is said once, by the rule that names its cause.
func reconcile(vs []Verdict, th *Thresholds) []Verdict {
	// Growth is explained only by a verdict that says as much: a suspicion at info does not
	// stand for a warning's growth.
	has := func(k Kind) bool {
		for _, v := range vs {
			if v.Kind == k && v.Severity.Rank() >= Warning.Rank() {
				return true
			}
		}
		return false
	}
	leak := Of(vs, KindHeapLeak)
	var keep []Verdict
	for _, v := range vs {
		if c, ok := v.Case.(*MemoryCase); ok && (explained(c.Part, has) || v.Severity.Rank() >= Warning.Rank() && spikeStep(c, vs)) {
			continue
		}
		// A rise that has not come back when the window ends is a suspected spike "or the
		// start of a rise": a confirmed heap leak says which.
		if v.Kind == KindTransientSpike && v.Confidence == Suspected && leak != nil && leak.Confidence == Confirmed {
			continue
		}
		keep = append(keep, v)
	}
	heldByGoroutines(keep, th)
	spikeSitesLast(keep)
	return keep
}

// spikeSitesLast moves, in a heap leak's culprits, the sites a transient spike blames after
// the others: what a burst allocates is in flight, and shows in a diff of two heap profiles
// only because the last was taken during a burst. The leak's own sites come first.
func spikeSitesLast(vs []Verdict) {
	sp, hl := Of(vs, KindTransientSpike), Of(vs, KindHeapLeak)
	if sp == nil || hl == nil {
		return
	}
	if _, ok := hl.Case.(*HeapLeakCase); !ok { // a site's leak names its site first
		return
	}
	spiky := func(c Culprit) bool {
		return slices.ContainsFunc(sp.Culprits, func(s Culprit) bool { return s.Function == c.Function })
	}
	slices.SortStableFunc(hl.Culprits, func(a, b Culprit) int {
		return cmp.Compare(b2i(spiky(a)), b2i(spiky(b)))
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spikeStep reports whether resident memory that rose (a warning's: a suspicion still says
// what more time would tell) is what a transient spike at warning reached: a step (MemoryCase.Step), or a growth of the memory bursts leave behind (their
// garbage before the next cycle, the free heap the runtime keeps after it), no larger than
// what the bursts make the process hold: a GC that reads a burst of L sets its next goal at 2L
// (GOGC=100), the heap grows to it before the next cycle, and the runtime's spans and the free
// heap it keeps around that add more; three times the bursts' peak. The spike says to size
// memory from that peak, which is what the rise says: said once.
func spikeStep(c *MemoryCase, vs []Verdict) bool {
	var rose float64
	switch {
	case c.Step != nil:
		rose = c.Step.Low - c.Step.First
	case c.Part == facts.PartGarbage || c.Part == facts.PartRetained:
		rose = c.Rise.Grew
	default:
		return false
	}
	for _, v := range vs {
		if sc, ok := v.Case.(*SpikeCase); ok && v.Severity.Rank() >= Warning.Rank() && spikeReach*sc.PeakHeap >= rose {
			return true
		}
	}
	return false
}

// spikeReach is how many times their peak bursts make resident memory rise (spikeStep).
const spikeReach = 3

// explained reports whether another verdict already explains growth of part.
func explained(part string, has func(Kind) bool) bool {
	switch part {
	case facts.PartLive:
		return has(KindHeapLeak)
	case facts.PartGarbage:
		return has(KindHeapLeak) || has(KindGCOverhead)
	case facts.PartRetained, facts.PartReleased:
		return has(KindRuntimeRetention)
	case facts.PartStacks:
		return has(KindGoroutineLeak)
	case facts.PartNonGo:
		return has(KindNonGoMemory)
	}
	return false
}

// heldByGoroutines says a live heap that grows with a goroutine leak, by no more than what
// the new goroutines plausibly hold each (HeapLeak.HeldPerGoroutine), once: the goroutine
// leak is the cause and its fix frees the heap. The heap leak stays as information, with its
// sites; a suspected one too, with nothing left to watch for (the goroutine leak, confirmed,
// explains it). A goroutine count suspected only for want of readings (goroutine profiles a
// large service serves slowly: fewer than Trend.MinConfirmPoints, all rising) is confirmed
// by a confirmed growth of the live heap that it explains: the heap's readings see the same
// goroutines, through what they hold (their g, what they reference).
func heldByGoroutines(vs []Verdict, th *Thresholds) {
	gl, hl := Of(vs, KindGoroutineLeak), Of(vs, KindHeapLeak)
	if gl == nil || hl == nil || hl.Severity.Rank() < Warning.Rank() && hl.Confidence != Suspected {
		return
	}
	gc, ok := gl.Case.(*GoroutineLeakCase)
	if !ok {
		return
	}
	few := gl.Confidence == Suspected && hl.Confidence == Confirmed && gc.Proof == nil && gc.Rise != nil &&
		gc.Rise.N < th.Trend.MinConfirmPoints && gc.Rise.Tau >= th.Trend.ConfirmTau && gc.Rise.StillRising
	if gl.Confidence != Confirmed && !few {
		return
	}
	var rose, leaked float64
	if gc.Rise != nil {
		rose = gc.Rise.Last - gc.Rise.First
	}
	if gc.Proof != nil {
		leaked = gc.Proof.Leaked
	}
	added := math.Max(rose, leaked)
	var grew float64
	switch c := hl.Case.(type) {
	case *HeapLeakCase:
		grew = c.Rise.Grew
	case *SiteLeakCase:
		grew = c.Rise.Grew
	}
	if added <= 0 || grew <= 0 || grew/added > th.HeapLeak.HeldPerGoroutine {
		return
	}
	held := &Held{Bytes: grew, Goroutines: added}
	hl.Severity, hl.WatchMoreSeconds = Info, 0
	switch c := hl.Case.(type) {
	case *HeapLeakCase:
		c.HeldBy = held
	case *SiteLeakCase:
		c.HeldBy = held
	}
	gc.Holds = held
	if few {
		gl.Confidence, gl.WatchMoreSeconds, gl.Severity = Confirmed, 0, Warning
		gc.Rise.Confidence, gc.Rise.WatchMore, gc.ByHeap = Confirmed, 0, true
		if gc.Rise.PerMinute > th.GoroutineLeak.CriticalPerMinute {
			gl.Severity = Critical
		}
		if b := gc.Blame; b != nil && b.Top != nil {
			b.Titled = true
		}
	}
}
