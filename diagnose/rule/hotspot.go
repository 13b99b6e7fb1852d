package rule

import (
	"math"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// HotspotCase is the sites that dominate what the program allocates, and what the GC work
// they cause costs.
type HotspotCase struct {
	// Rate is what the program allocated per second between the snapshots, over Seconds.
	Rate, Seconds float64
	Summary       facts.Summary
	// Cost is the share of the process's CPU the top site's allocations cost in GC work.
	Cost float64
	// Objects is set when the object counts were read.
	Objects *HotspotObjects
	// Patterns are, for each culprit, the known patterns it allocates through, heaviest
	// first; PatternSmallObjects for a top site of many small objects (Small then says how
	// many per second and how large).
	Patterns map[string][]facts.Pattern
	Small    SmallObjects
	// New is the later snapshot.
	New string
}

// HotspotObjects is what the object counts say.
type HotspotObjects struct {
	PerSecond float64
	// TopShare and TopSize are the top site's share of the objects and their mean size,
	// when it is among them (Top).
	Top               bool
	TopShare, TopSize float64
}

// SmallObjects is a site that allocates many small objects.
type SmallObjects struct {
	PerSecond float64
	Size      int64 // bytes, on average
}

// PatternSmallObjects names a site that allocates many small objects: not a known pattern of
// its stacks, but of its allocation's object size.
const PatternSmallObjects = "many small objects per call"

// allocationHotspot names the sites that dominate what the program allocates, matched
// against known patterns, when the GC work they cause costs CPU.
func allocationHotspot(fs *facts.Facts, th *Thresholds) outcome {
	ht := &th.Hotspot
	sum := fs.Summary
	refs := fs.PeriodicHeaps
	if fs.HeapSnap != nil && len(refs) <= 1 {
		return snapshotHotspot(fs.HeapSnap, th)
	}
	if len(refs) < 2 {
		return cannot(KindAllocationHotspot, WhyNeverMeasured, 0)
	}
	old, new := fs.Alloc.Old, fs.Alloc.New
	dt := new.T.Sub(old.T).Seconds()
	if dt < ht.MinSpan.Seconds() {
		return outcome{unjudged: &Unjudged{Kind: KindAllocationHotspot, Why: WhyTooShort,
			WatchMoreSeconds: time.Duration((ht.MinSpan.Seconds() - dt) * float64(time.Second)).Seconds(), Value: dt, Need: ht.MinSpan}}
	}
	if !fs.GC.CPUKnown {
		return cannot(KindAllocationHotspot, WhyCPUUnknown, 0)
	}
	space, err := fs.Alloc.Space, fs.Alloc.SpaceErr
	if err != nil {
		return outcome{
			unjudged: &Unjudged{Kind: KindAllocationHotspot, Why: WhyProfileError, Err: err},
			notes:    []Note{{Kind: KindAllocationHotspot, What: NoteProfileError, Err: err}},
		}
	}
	cs := hotspotCulprits(space, th)
	if len(cs) == 0 || cs[0].Share < ht.MinShare {
		return outcome{}
	}
	top := cs[0]
	// The assists' share of GC CPU is paid again as latency by the allocating goroutines.
	cost := top.Share * sum.GCCPUFraction * (1 + sum.GCAssistFraction)
	// Below InfoCost the GC work is not worth a word, but a known anti-pattern among the top
	// sites still is (as information): it costs CPU a heap profile does not show.
	cheap := cost < ht.InfoCost || gcIdle(fs, sum, &th.GC)
	if cheap && !anyKnown(fs.Alloc.Patterns, cs, ht) {
		return outcome{}
	}
	c := &HotspotCase{Rate: float64(space.Growth) / dt, Seconds: dt, Summary: sum, Cost: cost, New: new.Path}
	v := Verdict{
		Kind: KindAllocationHotspot, Severity: Info, Confidence: Confirmed,
		Start: old.T, End: new.T, Profiles: []string{old.Path, new.Path}, Culprits: cs, Case: c,
	}
	if n := sum.GCCount; n < th.GC.MinCycles || fs.GCCycles.Span() < th.GC.MinSpan {
		// Until the GC has run MinCycles times over MinSpan: at its present rate when known
		// (a hotspot of large objects can make it rare: ten cycles may take minutes).
		v.Confidence = Suspected
		more := math.Max(th.GC.MinSpan.Seconds()-fs.GCCycles.Span().Seconds(), 10)
		if sum.GCPerSecond > 0 && n < th.GC.MinCycles {
			more = math.Max(more, float64(th.GC.MinCycles-n)/sum.GCPerSecond)
		}
		v.WatchMoreSeconds = more
	}
	var topObjects int64
	c.Objects, topObjects = objectCounts(fs.Alloc.Objects, top, dt)
	// Patterns, weighted by the bytes each site allocates through them.
	c.Patterns = culpritPatterns(fs.Alloc.Patterns, cs)
	// A specific anti-pattern (not just many small objects) whose site alone makes the GC run
	// GC.MinRate times a second or more costs what the gc-overhead rule counts: every cycle
	// pauses the program and slows the allocating goroutines, whatever its share of the CPU.
	drives := len(c.Patterns[top.Function]) > 0 && top.Share*sum.GCPerSecond >= th.GC.MinRate
	if len(c.Patterns[top.Function]) == 0 && topObjects > 0 && top.Bytes/topObjects <= ht.SmallObject {
		c.Patterns[top.Function] = []facts.Pattern{{Name: PatternSmallObjects}}
		c.Small = SmallObjects{PerSecond: float64(topObjects) / dt, Size: top.Bytes / topObjects}
	}
	known := len(c.Patterns[top.Function]) > 0
	if !cheap && top.Share >= ht.WarnShare && (cost >= ht.WarnCost || known && cost >= ht.KnownCost || drives) {
		v.Severity = Warning
	}
	return outcome{verdicts: []Verdict{v}}
}

// anyKnown reports whether a culprit with at least the minimum share goes through a known
// anti-pattern.
func anyKnown(pats map[string][]facts.Pattern, cs []Culprit, th *Hotspot) bool {
	for _, c := range cs {
		if c.Share >= th.MinShare && len(pats[c.Function]) > 0 {
			return true
		}
	}
	return false
}

// hotspotCulprits are the sites that allocate the most, down to a third of the minimum share.
func hotspotCulprits(space *facts.SiteDiff, th *Thresholds) []Culprit {
	var cs []Culprit
	for _, d := range space.ByFunction {
		share := float64(d.Delta) / math.Max(float64(space.Growth), 1)
		if d.Delta <= 0 || len(cs) == th.Culprits.Max || len(cs) > 0 && share < th.Hotspot.MinShare/3 {
			break
		}
		cs = append(cs, culpritFromDelta(d, space.Unit, share))
	}
	return keepCulprits(cs, &th.Culprits)
}

// objectCounts is what the object counts (nil when unknown) say of a hotspot, and the number
// of objects its top site allocated between the snapshots (0 when unknown).
func objectCounts(objects *facts.SiteDiff, top Culprit, dt float64) (*HotspotObjects, int64) {
	if objects == nil || objects.Growth <= 0 {
		return nil, 0
	}
	o := &HotspotObjects{PerSecond: float64(objects.Growth) / dt}
	for _, d := range objects.ByFunction {
		if d.Site.Function == top.Function {
			o.Top = true
			o.TopShare = float64(d.Delta) / float64(objects.Growth)
			o.TopSize = float64(top.Bytes) / float64(max(d.Delta, 1))
			return o, d.Delta
		}
	}
	return o, 0
}

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
