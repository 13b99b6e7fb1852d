package rule

import (
	"math"

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
		if c, ok := v.Case.(*MemoryCase); ok && explained(c.Part, has) {
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
	return keep
}

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
// sites.
func heldByGoroutines(vs []Verdict, th *Thresholds) {
	gl, hl := Of(vs, KindGoroutineLeak), Of(vs, KindHeapLeak)
	if gl == nil || hl == nil || gl.Confidence != Confirmed || hl.Severity.Rank() < Warning.Rank() {
		return
	}
	gc, ok := gl.Case.(*GoroutineLeakCase)
	if !ok {
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
	hl.Severity = Info
	switch c := hl.Case.(type) {
	case *HeapLeakCase:
		c.HeldBy = held
	case *SiteLeakCase:
		c.HeldBy = held
	}
	gc.Holds = held
}
