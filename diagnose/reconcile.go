package diagnose

// reconcile makes the findings agree with each other: a finding that another explains is
// dropped, so that one problem is said once, by the rule that names its cause.
func reconcile(in *input, d *Diagnosis) {
	has := func(k Kind) bool { return findingOfKind(d.Findings, k) != nil }
	var keep []Finding
	for _, f := range d.Findings {
		if f.Kind == KindMemoryGrowth && explained(in.growthPart, has) {
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
