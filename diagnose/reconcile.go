package diagnose

// reconcile makes the findings agree with each other: a finding that another explains is
// dropped, so that one problem is said once, by the rule that names its cause.
func reconcile(in *input, d *Diagnosis) {
	has := func(k Kind) bool { return findingOfKind(d.Findings, k) != nil }
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
	if keep == nil {
		d.Findings = []Finding{}
	}
}

// explained reports whether another finding already explains growth of part.
func explained(part string, has func(Kind) bool) bool {
	switch part {
	case partLive:
		return has(KindHeapLeak)
	case partGarbage:
		return has(KindHeapLeak) || has(KindGCOverhead)
	case partRetained, partReleased:
		return has(KindRuntimeRetention)
	case partStacks:
		return has(KindGoroutineLeak)
	case partNonGo:
		return has(KindNonGoMemory)
	}
	return false
}
