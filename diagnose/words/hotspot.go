package words

import (
	"fmt"
	"regexp"

	"github.com/memdoctor/memdoctor/diagnose/rule"
	"github.com/memdoctor/memdoctor/facts"
)

func hotspot(f *Finding, c *rule.HotspotCase) {
	sum, cs, dt := c.Summary, f.Culprits, c.Seconds
	top := cs[0]
	f.Evidence = map[string]float64{
		"alloc_bytes_per_second":     c.Rate,
		"gc_cpu_fraction":            sum.GCCPUFraction,
		"gc_per_second":              sum.GCPerSecond,
		"gc_assist_fraction":         sum.GCAssistFraction,
		"top_site_share":             top.Share,
		"top_site_bytes_per_second":  float64(top.Bytes) / dt,
		"top_site_cpu_cost_fraction": c.Cost,
		"window_seconds":             dt,
	}
	if o := c.Objects; o != nil {
		f.Evidence["alloc_objects_per_second"] = o.PerSecond
		if o.Top {
			f.Evidence["top_site_objects_share"] = o.TopShare
			f.Evidence["top_site_object_size_bytes"] = o.TopSize
		}
	}
	name := "allocates the most"
	if pats := c.Patterns[top.Function]; len(pats) > 0 {
		name = pats[0].Name
	}
	f.Title = fmt.Sprintf("%s: %s allocates %s of all bytes (%s/s), costing about %s of the CPU in GC work", name, top.Function, pct(top.Share), bytesStr(float64(top.Bytes)/dt), pct(c.Cost))
	f.Detail = fmt.Sprintf("Between the first and last heap snapshots the program allocated %s/s; the GC ran %.1f times per second and used %s of the process's CPU. "+
		"The GC's work grows with what is allocated, so this site's %s of the bytes costs about %s of the CPU: cutting the top sites cuts GC frequency and its CPU in proportion.",
		bytesStr(c.Rate), sum.GCPerSecond, pct(sum.GCCPUFraction), pct(top.Share), pct(c.Cost))
	small := fmt.Sprintf("It allocates %.0f small objects per second (%d bytes on average): allocate them once and reuse them "+
		"(a preallocated slice of values used as a stack, a free list, or sync.Pool), and keep per-element state in values rather than pointers.",
		c.Small.PerSecond, c.Small.Size)
	f.Advice = hotspotAdvice(cs, c.Patterns, small)
	f.Advice = append(f.Advice, "Dig into the lines: "+fmt.Sprintf("go tool pprof -sample_index=alloc_space -list '%s' %s", regexp.QuoteMeta(top.Function), c.New))
}

func snapshotHotspot(f *Finding, c *rule.SnapshotHotspotCase) {
	top, p := f.Culprits[0], c.Patterns[0]
	f.Title = fmt.Sprintf("one heap profile: %s: %s allocated %s of all bytes since the program started", p.Name, top.Function, pct(top.Share))
	f.Detail = fmt.Sprintf("This is one snapshot, not a trend: the profile counts %s allocated since the program started, %s of it by %s, through a known pattern (%s). "+
		"What it costs is unknown from one profile: the GC's work follows the allocation rate, which two profiles minutes apart give.",
		bytesStr(float64(c.Total)), pct(top.Share), top.Function, p.Name)
	f.Evidence = map[string]float64{
		"alloc_bytes":          float64(c.Total),
		"top_site_bytes":       float64(top.Bytes),
		"top_site_share":       top.Share,
		"hotspot_min_fraction": c.MinShare,
	}
	f.Advice = hotspotAdvice(f.Culprits, map[string][]facts.Pattern{top.Function: c.Patterns}, "")
	f.Advice = append(f.Advice, fmt.Sprintf("Dig into the lines: go tool pprof -sample_index=alloc_space -list '%s' %s", regexp.QuoteMeta(top.Function), c.Snap))
}

// hotspotAdvice gives each pattern's advice once, naming the first culprit that shows it
// (small is the advice for many small objects).
func hotspotAdvice(cs []rule.Culprit, pats map[string][]facts.Pattern, small string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range pats[c.Function] {
			if !seen[p.Name] {
				seen[p.Name] = true
				advice := patternAdvice[p.Name].hotspot
				if p.Name == rule.PatternSmallObjects {
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
