package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/memdoctor/memdoctor/internal/culprit"
	"github.com/memdoctor/memdoctor/session"
)

func init() { register(KindAllocationHotspot, allocationHotspot) }

// Thresholds of the allocation-hotspot rule: a hotspot is reported only when allocation
// costs something (rate or GC CPU) and one site holds a real share of it.
const (
	hotMinSpanSeconds = 10
	hotMinRate        = 32 << 20 // bytes/s: below this and a low GC CPU, allocation is cheap
	hotMinGCCPU       = 0.05
	hotMinShare       = 0.15
	hotWarnGCCPU      = 0.10 // warning from this GC CPU on, with a dominant site
	hotWarnShare      = 0.25
	hotWarnRate       = 128 << 20
	// hotKnownRate: a known anti-pattern that dominates allocation is worth fixing from this
	// rate on (or from hotMinGCCPU).
	hotKnownRate = 64 << 20
	smallObject  = 256 // bytes: below this average size, object count drives the GC cost
)

// allocationHotspot names the sites that dominate what the program allocates, matched
// against known patterns with specific advice.
func allocationHotspot(in *Input) []Finding {
	refs := in.periodicHeaps()
	if len(refs) < 2 {
		return nil
	}
	old, new := refs[0], refs[len(refs)-1]
	dt := new.Time.Sub(old.Time).Seconds()
	if dt < hotMinSpanSeconds {
		return nil
	}
	space, err := in.heapDiff(old, new, "alloc_space")
	if err != nil {
		in.notef("allocation-hotspot: %v", err)
		return nil
	}
	sum := in.Summary()
	rate := float64(space.Growth) / dt
	gcCPU := sum.GCCPUFraction
	gcCosts := in.gcCores() >= gcMinCores // a share of almost no CPU is no cost
	if rate < hotMinRate && !(gcCosts && gcCPU >= hotMinGCCPU) {
		return nil
	}
	cs := hotspotCulprits(space)
	if len(cs) == 0 || cs[0].Share < hotMinShare {
		return nil
	}
	top := cs[0]
	f := Finding{
		Kind:     KindAllocationHotspot,
		Severity: Info,
		Evidence: map[string]float64{
			"alloc_bytes_per_second":    rate,
			"gc_cpu_fraction":           gcCPU,
			"gc_per_second":             sum.GCPerSecond,
			"top_site_share":            top.Share,
			"top_site_bytes_per_second": float64(top.Bytes) / dt,
			"window_seconds":            dt,
		},
		Start: old.Time, End: new.Time,
		Profiles: profileNames(old, new),
		Culprits: cs,
	}
	topObjects := in.objectEvidence(&f, old, new, dt)
	// Patterns, weighted by the bytes each site allocates through them.
	pats := in.sitePatterns(new, cs)
	if len(pats[top.Function]) == 0 && topObjects > 0 && top.Bytes/topObjects <= smallObject {
		pats[top.Function] = []pattern{{
			name: "many small objects per call",
			advice: fmt.Sprintf("It allocates %.0f small objects per second (%d bytes on average): allocate them once and reuse them "+
				"(a preallocated slice of values used as a stack, a free list, or sync.Pool), and keep per-element state in values rather than pointers.",
				float64(topObjects)/dt, top.Bytes/topObjects),
		}}
	}
	known := len(pats[top.Function]) > 0
	costly := gcCosts && gcCPU >= hotWarnGCCPU || rate >= hotWarnRate ||
		known && (gcCosts && gcCPU >= hotMinGCCPU || rate >= hotKnownRate)
	if costly && top.Share >= hotWarnShare {
		f.Severity = Warning
	}
	name := "allocates the most"
	if known {
		name = pats[top.Function][0].name
	}
	f.Title = fmt.Sprintf("%s: %s allocates %s of all bytes (%s/s)", name, top.Function, pct(top.Share), bytesStr(float64(top.Bytes)/dt))
	f.Detail = fmt.Sprintf("Between the first and last heap snapshots the program allocated %s/s; the GC ran %.1f times per second and used %s of the CPU. "+
		"Every allocated byte is work for the GC: cutting the top sites cuts GC frequency and its CPU in proportion.",
		bytesStr(rate), sum.GCPerSecond, pct(gcCPU))
	f.Advice = hotspotAdvice(cs, pats)
	f.Advice = append(f.Advice, "Dig into the lines: "+fmt.Sprintf("go tool pprof -sample_index=alloc_space -list '%s' %s", regexp.QuoteMeta(top.Function), new.Path))
	return []Finding{f}
}

// hotspotCulprits are the sites that allocate the most, down to a third of the minimum share.
func hotspotCulprits(space *culprit.DiffResult) []Culprit {
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

// objectEvidence adds the object counts to a hotspot finding and returns the number of
// objects its top site allocated between the snapshots (0 when unknown).
func (in *Input) objectEvidence(f *Finding, old, new session.ProfileRef, dt float64) int64 {
	objects, err := in.heapDiff(old, new, "alloc_objects")
	if err != nil || objects.Growth <= 0 {
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

// hotspotAdvice gives each pattern's advice once, naming the first culprit that shows it.
func hotspotAdvice(cs []Culprit, pats map[string][]pattern) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range pats[c.Function] {
			if !seen[p.name] {
				seen[p.name] = true
				out = append(out, fmt.Sprintf("%s (%s): %s", c.Function, p.name, p.advice))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%s allocates %s of the bytes: reuse buffers (sync.Pool), preallocate, and avoid building temporary values per call.", cs[0].Function, pct(cs[0].Share)))
	}
	return out
}

// sitePatterns returns, for each culprit function, the known patterns its allocating
// stacks go through, heaviest first, keeping those with at least 10% of its bytes. It reads
// the cumulative alloc_space of one snapshot: the mix of stacks, not its amount, matters.
func (in *Input) sitePatterns(ref session.ProfileRef, cs []Culprit) map[string][]pattern {
	out := map[string][]pattern{}
	p, err := in.Profile(ref)
	if err != nil {
		return out
	}
	idx, err := culprit.SampleIndex(p, "alloc_space")
	if err != nil {
		return out
	}
	want := map[string]bool{}
	for _, c := range cs {
		want[c.Function] = true
	}
	weights := map[string][]float64{} // function -> weight per pattern
	totals := map[string]float64{}
	for _, s := range p.Sample {
		site, stack := culprit.Attribute(s.Location, in.Culprit)
		if !want[site.Function] {
			continue
		}
		v := float64(s.Value[idx])
		totals[site.Function] += v
		w := weights[site.Function]
		if w == nil {
			w = make([]float64, len(patterns))
			weights[site.Function] = w
		}
		for i, pat := range patterns {
			if pat.matches(stack) {
				w[i] += v
			}
		}
	}
	for fn, w := range weights {
		var idxs []int
		for i, v := range w {
			if v >= 0.1*totals[fn] && v > 0 {
				idxs = append(idxs, i)
			}
		}
		sort.SliceStable(idxs, func(a, b int) bool { return w[idxs[a]] > w[idxs[b]] })
		for _, i := range idxs {
			out[fn] = append(out[fn], patterns[i])
		}
	}
	return out
}
