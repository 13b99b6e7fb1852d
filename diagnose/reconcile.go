package diagnose

import (
	"fmt"
	"math"

	"github.com/memdoctor/memdoctor/facts"
)

// reconcile makes the findings agree with each other: a finding that another explains is
// dropped, so that one problem is said once, by the rule that names its cause.
func reconcile(in *input, d *Diagnosis) {
	// Growth is explained only by a finding that says as much: a suspicion at info does not
	// stand for a warning's growth.
	has := func(k Kind) bool {
		for _, f := range d.Findings {
			if f.Kind == k && f.Severity.Rank() >= Warning.Rank() {
				return true
			}
		}
		return false
	}
	leak := findingOfKind(d.Findings, KindHeapLeak)
	var keep []Finding
	for _, f := range d.Findings {
		if f.Kind == KindMemoryGrowth && explained(in.growthPart, has) {
			continue
		}
		// A rise that has not come back when the window ends is a suspected spike "or the
		// start of a rise": a confirmed heap leak says which.
		if f.Kind == KindTransientSpike && f.Confidence == Suspected && leak != nil && leak.Confidence == Confirmed {
			continue
		}
		keep = append(keep, f)
	}
	d.Findings = keep
	heldByGoroutines(d.Findings)
	if keep == nil {
		d.Findings = []Finding{}
	}
}

// explained reports whether another finding already explains growth of part.
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

// heldPerGoroutine: heap growth up to this much per goroutine a leak added is what those
// goroutines hold (a request, a connection's buffers, a result they never hand over).
const heldPerGoroutine = 64 << 10

// heldByGoroutines says a live heap that grows with a goroutine leak, by no more than what
// the new goroutines plausibly hold each, once: the goroutine leak is the cause and its fix
// frees the heap. The heap leak stays as information, with its sites.
func heldByGoroutines(fs []Finding) {
	gl, hl := findingOfKind(fs, KindGoroutineLeak), findingOfKind(fs, KindHeapLeak)
	if gl == nil || hl == nil || gl.Confidence != Confirmed || hl.Severity.Rank() < Warning.Rank() {
		return
	}
	added := math.Max(gl.Evidence["goroutines_end_count"]-gl.Evidence["goroutines_start_count"], gl.Evidence["leaked_goroutines_count"])
	grew := hl.Evidence["growth_bytes"]
	if added <= 0 || grew <= 0 || grew/added > heldPerGoroutine {
		return
	}
	hl.Severity = Info
	hl.Title = fmt.Sprintf("the live heap grows with the leaked goroutines: %s for %.0f more goroutines (%s each)", bytesStr(grew), added, bytesStr(grew/added))
	hl.Detail += " It grows no faster than what the leaked goroutines hold each: fixing the goroutine leak frees it (see goroutine-leak)."
	gl.Evidence["heap_held_bytes"] = grew
	gl.Detail += fmt.Sprintf(" The live heap grew %s with them, about %s per goroutine: what they hold.", bytesStr(grew), bytesStr(grew/added))
}
