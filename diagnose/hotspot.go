package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Thresholds of the allocation-hotspot rule. A hotspot is judged on what it costs, not on
// how much is allocated: a busy, healthy server allocates a lot. Its cost is its share of the
// bytes allocated times the GC's share of the process's CPU (the GC's work is in proportion
// to allocation), with mark assists, which stall the allocating goroutines, counted again.
const (
	hotMinSpanSeconds = 10
	hotMinShare       = 0.15
	hotWarnShare      = 0.25
	// hotInfoCost and hotWarnCost: the share of the process's CPU that the top site's
	// allocations cost in GC work, from which it is reported, and warned about.
	hotInfoCost = 0.02
	hotWarnCost = 0.06
	// hotKnownCost: the warning threshold for a known anti-pattern (a regexp compiled per
	// call, reflection, whole documents decoded): it burns CPU beyond the GC's (compiling,
	// reflecting, decoding), which a heap profile does not show, and its fix is known.
	hotKnownCost = 0.03
	smallObject  = 256 // bytes: below this average size, object count drives the GC cost
)

// allocationHotspot names the sites that dominate what the program allocates, matched
// against known patterns with specific advice, when the GC work they cause costs CPU.
func allocationHotspot(in *input) outcome {
	fs, sum := in.f, in.f.Summary
	refs := fs.PeriodicHeaps
	if fs.HeapSnap != nil && len(refs) <= 1 {
		return in.snapshotHotspot(fs.HeapSnap)
	}
	if len(refs) < 2 {
		return cannot(KindAllocationHotspot, 0, "%s", fs.Gaps[facts.GapHeapSnaps])
	}
	old, new := fs.Alloc.Old, fs.Alloc.New
	dt := new.T.Sub(old.T).Seconds()
	if dt < hotMinSpanSeconds {
		return cannot(KindAllocationHotspot, time.Duration((hotMinSpanSeconds-dt)*float64(time.Second)), "the heap snapshots span %s: allocation is compared over %ds or more", humanDuration(dt), hotMinSpanSeconds)
	}
	if !fs.GC.CPUKnown {
		return cannot(KindAllocationHotspot, 0, "what allocation costs is unknown: the GC's CPU time was not measured (%s)", fs.Gaps[facts.GapGCCPU])
	}
	space, err := fs.Alloc.Space, fs.Alloc.SpaceErr
	if err != nil {
		in.notef("allocation-hotspot: %v", err)
		return cannot(KindAllocationHotspot, 0, "the heap snapshots could not be compared: %v", err)
	}
	rate := float64(space.Growth) / dt
	gcCPU := sum.GCCPUFraction
	cs := hotspotCulprits(space)
	if len(cs) == 0 || cs[0].Share < hotMinShare {
		return outcome{}
	}
	top := cs[0]
	// The assists' share of GC CPU is paid again as latency by the allocating goroutines.
	cost := top.Share * gcCPU * (1 + sum.GCAssistFraction)
	// Below hotInfoCost the GC work is not worth a word, but a known anti-pattern among the
	// top sites still is (as information): it costs CPU a heap profile does not show.
	cheap := cost < hotInfoCost || gcIdle(fs, sum)
	if cheap && !anyKnown(fs.Alloc.Patterns, cs) {
		return outcome{}
	}
	f := Finding{
		Kind:       KindAllocationHotspot,
		Severity:   Info,
		Confidence: Confirmed,
		Evidence: map[string]float64{
			"alloc_bytes_per_second":     rate,
			"gc_cpu_fraction":            gcCPU,
			"gc_per_second":              sum.GCPerSecond,
			"gc_assist_fraction":         sum.GCAssistFraction,
			"top_site_share":             top.Share,
			"top_site_bytes_per_second":  float64(top.Bytes) / dt,
			"top_site_cpu_cost_fraction": cost,
			"window_seconds":             dt,
		},
		Start: old.T, End: new.T,
		Profiles: []string{old.Path, new.Path},
		Culprits: cs,
	}
	if n := sum.GCCount; n < gcMinCycles || fs.GCCycles.Span() < gcMinSpan {
		// Until the GC has run gcMinCycles times over gcMinSpan: at its present rate when
		// known (a hotspot of large objects can make it rare: ten cycles may take minutes).
		f.Confidence = Suspected
		more := math.Max(gcMinSpan.Seconds()-fs.GCCycles.Span().Seconds(), 10)
		if sum.GCPerSecond > 0 && n < gcMinCycles {
			more = math.Max(more, float64(gcMinCycles-n)/sum.GCPerSecond)
		}
		f.WatchMoreSeconds = more
	}
	topObjects := objectEvidence(&f, fs.Alloc.Objects, dt)
	// Patterns, weighted by the bytes each site allocates through them.
	pats := culpritPatterns(fs.Alloc.Patterns, cs)
	// A specific anti-pattern (not just many small objects) whose site alone makes the GC run
	// gcMinRate times a second or more costs what the gc-overhead rule counts: every cycle
	// pauses the program and slows the allocating goroutines, whatever its share of the CPU.
	drives := len(pats[top.Function]) > 0 && top.Share*sum.GCPerSecond >= gcMinRate
	smallAdvice := ""
	if len(pats[top.Function]) == 0 && topObjects > 0 && top.Bytes/topObjects <= smallObject {
		pats[top.Function] = []facts.Pattern{{Name: patternSmallObjects}}
		smallAdvice = fmt.Sprintf("It allocates %.0f small objects per second (%d bytes on average): allocate them once and reuse them "+
			"(a preallocated slice of values used as a stack, a free list, or sync.Pool), and keep per-element state in values rather than pointers.",
			float64(topObjects)/dt, top.Bytes/topObjects)
	}
	known := len(pats[top.Function]) > 0
	if !cheap && top.Share >= hotWarnShare && (cost >= hotWarnCost || known && cost >= hotKnownCost || drives) {
		f.Severity = Warning
	}
	if cheap {
		f.Detail += " The GC work it causes is small here; the pattern is worth fixing for the CPU it costs besides."
	}
	name := "allocates the most"
	if known {
		name = pats[top.Function][0].Name
	}
	f.Title = fmt.Sprintf("%s: %s allocates %s of all bytes (%s/s), costing about %s of the CPU in GC work", name, top.Function, pct(top.Share), bytesStr(float64(top.Bytes)/dt), pct(cost))
	f.Detail = fmt.Sprintf("Between the first and last heap snapshots the program allocated %s/s; the GC ran %.1f times per second and used %s of the process's CPU. "+
		"The GC's work grows with what is allocated, so this site's %s of the bytes costs about %s of the CPU: cutting the top sites cuts GC frequency and its CPU in proportion.",
		bytesStr(rate), sum.GCPerSecond, pct(gcCPU), pct(top.Share), pct(cost))
	f.Advice = hotspotAdvice(cs, pats, smallAdvice)
	f.Advice = append(f.Advice, "Dig into the lines: "+fmt.Sprintf("go tool pprof -sample_index=alloc_space -list '%s' %s", regexp.QuoteMeta(top.Function), new.Path))
	return found(f)
}

// anyKnown reports whether a culprit with at least the minimum share goes through a known
// anti-pattern.
func anyKnown(pats map[string][]facts.Pattern, cs []Culprit) bool {
	for _, c := range cs {
		if c.Share >= hotMinShare && len(pats[c.Function]) > 0 {
			return true
		}
	}
	return false
}

// hotspotCulprits are the sites that allocate the most, down to a third of the minimum share.
func hotspotCulprits(space *facts.SiteDiff) []Culprit {
	var cs []Culprit
	for _, d := range space.ByFunction {
		share := float64(d.Delta) / math.Max(float64(space.Growth), 1)
		if d.Delta <= 0 || len(cs) == 5 || len(cs) > 0 && share < hotMinShare/3 {
			break
		}
		cs = append(cs, culpritFromDelta(d, space.Unit, share))
	}
	return keepCulprits(cs, 5)
}

// objectEvidence adds the object counts (nil when unknown) to a hotspot finding and returns
// the number of objects its top site allocated between the snapshots (0 when unknown).
func objectEvidence(f *Finding, objects *facts.SiteDiff, dt float64) int64 {
	if objects == nil || objects.Growth <= 0 {
		return 0
	}
	top := f.Culprits[0]
	f.Evidence["alloc_objects_per_second"] = float64(objects.Growth) / dt
	for _, d := range objects.ByFunction {
		if d.Site.Function == top.Function {
			f.Evidence["top_site_objects_share"] = float64(d.Delta) / float64(objects.Growth)
			f.Evidence["top_site_object_size_bytes"] = float64(top.Bytes) / float64(max(d.Delta, 1))
			return d.Delta
		}
	}
	return 0
}

// patternSmallObjects names a site that allocates many small objects: not a known pattern of
// its stacks, but of its allocation's object size.
const patternSmallObjects = "many small objects per call"

// culpritPatterns is the patterns of the culprits' functions alone.
func culpritPatterns(all map[string][]facts.Pattern, cs []Culprit) map[string][]facts.Pattern {
	out := map[string][]facts.Pattern{}
	for _, c := range cs {
		if p, ok := all[c.Function]; ok {
			out[c.Function] = p
		}
	}
	return out
}

// hotspotAdvice gives each pattern's advice once, naming the first culprit that shows it
// (small is the advice for many small objects).
func hotspotAdvice(cs []Culprit, pats map[string][]facts.Pattern, small string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range pats[c.Function] {
			if !seen[p.Name] {
				seen[p.Name] = true
				advice := patternAdvice[p.Name].hotspot
				if p.Name == patternSmallObjects {
					advice = small
				}
				out = append(out, fmt.Sprintf("%s (%s): %s", c.Function, p.Name, advice))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%s allocates %s of the bytes: reuse buffers (sync.Pool), preallocate, and avoid building temporary values per call.", cs[0].Function, pct(cs[0].Share)))
	}
	return out
}
