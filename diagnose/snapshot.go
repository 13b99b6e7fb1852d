package diagnose

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// SnapshotView is what one profile shows at the instant it was taken, for a kind of profile
// the evidence holds only one of (a heap profile, a goroutine profile): no trend can be
// judged from it, but what it holds, by the program's own code, is known. It is said as a
// snapshot, never as a trend.
type SnapshotView struct {
	Kind    string    `json:"kind"` // "heap" or "goroutine"
	Time    time.Time `json:"time"`
	Profile string    `json:"profile"`
	// WindowSeconds is what a delta heap profile (?seconds=N) covers: its values are what
	// changed in that window, not the heap.
	WindowSeconds float64 `json:"window_seconds,omitempty"`
	// Heap: the bytes held (inuse_space, as of the last GC) and allocated since the program
	// started (alloc_space), and the sites of the program's own code that hold and allocate
	// the most, with the known allocation patterns they go through.
	InuseBytes int64 `json:"inuse_bytes,omitempty"`
	AllocBytes int64 `json:"alloc_bytes,omitempty"`
	// InuseObjects and AllocObjects are the totals of a profile that kept only object counts
	// (its sites then carry counts, not bytes).
	InuseObjects int64             `json:"inuse_objects,omitempty"`
	AllocObjects int64             `json:"alloc_objects,omitempty"`
	Retainers    []Culprit         `json:"retainers,omitempty"`
	Allocators   []Culprit         `json:"allocators,omitempty"`
	Patterns     []SnapshotPattern `json:"patterns,omitempty"`
	// Goroutines: how many, and the sites where they wait, most first.
	Goroutines int             `json:"goroutines,omitempty"`
	Groups     []GoroutineSite `json:"groups,omitempty"`
}

// SnapshotPattern is a known allocation pattern that an allocating site goes through.
type SnapshotPattern struct {
	Name     string  `json:"name"`
	Function string  `json:"function"`
	Share    float64 `json:"share"` // the site's share of all bytes allocated
	Advice   string  `json:"advice"`
}

// GoroutineSite is the goroutines waiting at one site of the program.
type GoroutineSite struct {
	Culprit
	State       string `json:"state"` // the wait state, from the dump or the runtime frames
	CreatedBy   string `json:"created_by,omitempty"`
	WaitMinutes int    `json:"wait_minutes,omitempty"` // the longest wait a debug=2 dump reported
	Leaked      int    `json:"leaked,omitempty"`       // marked "(leaked)" by the runtime's detector
}

// How many sites a snapshot view lists.
const (
	snapTopSites  = 5
	snapTopGroups = 10
)

// What makes one blocked site a suspected pile-up in a single goroutine profile. A pile-up
// grows without bound, so by the time someone takes a profile it outnumbers everything else,
// while a service's steady goroutines (listeners, workers, connections, tickers) spread over
// many sites: one blocked site of the program's own code holding half of all goroutines is
// out of the ordinary. Fewer than 100 are left alone: that is what fixed pools and small
// services hold (a pyroscope client keeps 5 of its 10 goroutines in one worker loop), and
// their stacks hold under a MiB. A large idle worker pool can still dominate: one profile
// cannot tell it from a pile-up, so the finding is only suspected and says how to tell.
const (
	pileUpShare = 0.5
	pileUpCount = 100
)

// snapshotViews describes the kinds of profile the evidence holds only one of.
func (in *input) snapshotViews() []SnapshotView {
	var out []SnapshotView
	if h := in.f.HeapSnap; h != nil {
		if v, err := heapView(h); err == nil {
			out = append(out, v)
		} else {
			in.notef("snapshot: %v", err)
		}
	}
	if g := &in.f.Goroutine; g.Single != nil {
		if v, err := goroutineView(*g.Single, g.SingleSites, g.SingleErr); err == nil {
			out = append(out, v)
		} else {
			in.notef("snapshot: %v", err)
		}
	}
	return out
}

// heapView lists a heap profile's top retainers and allocators in the program's own code: by
// bytes, else (a profile that kept only object counts) by objects.
func heapView(h *facts.HeapSnapshot) (SnapshotView, error) {
	s := h.Snap
	v := SnapshotView{Kind: s.Kind, Time: s.T, Profile: s.Path, WindowSeconds: h.Window}
	held, allocated := h.Held, h.Allocated
	if held != nil {
		v.Retainers = topSites(held)
		if held.Unit == "bytes" {
			v.InuseBytes = held.Total
		} else {
			v.InuseObjects = held.Total
		}
	}
	if allocated != nil {
		v.Allocators = topSites(allocated)
		if allocated.Unit == "bytes" {
			v.AllocBytes = allocated.Total
		} else {
			v.AllocObjects = allocated.Total
		}
	}
	if held == nil && allocated == nil {
		return v, h.Err
	}
	if allocated != nil && allocated.Unit == "bytes" {
		for _, c := range v.Allocators {
			for _, p := range h.Patterns[c.Function] {
				v.Patterns = append(v.Patterns, SnapshotPattern{Name: p.Name, Function: c.Function, Share: c.Share, Advice: patternAdvice[p.Name].hotspot})
			}
		}
	}
	return v, nil
}

// topSites are a table's heaviest sites, as culprits with their share of its total.
func topSites(tab *facts.SiteTable) []Culprit {
	var cs []Culprit
	for _, e := range tab.ByFunction {
		if e.Value <= 0 || len(cs) == 2*snapTopSites {
			break
		}
		c := Culprit{Function: e.Site.Function, File: e.Site.File, Line: e.Site.Line, Share: float64(e.Value) / math.Max(float64(tab.Total), 1),
			Stack: e.Stack, Own: e.Site.Own}
		if tab.Unit == "bytes" {
			c.Bytes = e.Value
		} else {
			c.Count = e.Value
		}
		cs = append(cs, c)
	}
	return keepCulprits(cs, snapTopSites)
}

// goroutineView lists a goroutine profile's sites, most goroutines first.
func goroutineView(s facts.Snapshot, sites []facts.GoroutineGroup, err error) (SnapshotView, error) {
	if err != nil {
		return SnapshotView{}, err
	}
	v := SnapshotView{Kind: s.Kind, Time: s.T, Profile: s.Path}
	for _, g := range sites {
		v.Goroutines += g.Count
	}
	for i, g := range sites {
		if i == snapTopGroups {
			break
		}
		v.Groups = append(v.Groups, goroutineSite(g, v.Goroutines))
	}
	return v, nil
}

func goroutineSite(g facts.GoroutineGroup, total int) GoroutineSite {
	return GoroutineSite{
		Culprit: Culprit{Function: g.Culprit.Function, File: g.Culprit.File, Line: g.Culprit.Line, Count: int64(g.Count),
			Share: float64(g.Count) / math.Max(float64(total), 1), Stack: g.Stack, Own: g.Culprit.Own},
		State: waitState(g.GoroutineGroup), CreatedBy: g.CreatedBy, WaitMinutes: g.WaitMinutes, Leaked: g.Leaked,
	}
}

// pileUp is the suspected goroutine pile-up of a single goroutine profile: one blocked site
// of the program's own code (or an HTTP client's connections, whose readers are all standard
// library) holding at least pileUpShare of all goroutines and at least pileUpCount.
func (in *input) pileUp() (Finding, bool) {
	g := &in.f.Goroutine
	s, sites, err := *g.Single, g.SingleSites, g.SingleErr
	if err != nil || len(sites) == 0 {
		return Finding{}, false
	}
	total := 0
	for _, g := range sites {
		total += g.Count
	}
	top := sites[0]
	state := waitState(top.GoroutineGroup)
	share := float64(top.Count) / float64(total)
	blocked := state != "sleep" && state != "running" && state != "runnable" && state != "a wait"
	if top.Count < pileUpCount || share < pileUpShare || !blocked || !top.Culprit.Own && !clientConns(top.GoroutineGroup) {
		return Finding{}, false
	}
	f := Finding{
		Kind: KindGoroutineLeak, Severity: Info, Confidence: Suspected, Snapshot: true,
		Title: fmt.Sprintf("one goroutine profile: %d of its %d goroutines (%.1f%%) are blocked in %s at %s: a pile-up, or a large idle pool",
			top.Count, total, 100*share, state, top.Culprit.Function),
		Detail: fmt.Sprintf("This is one snapshot, not a trend. One site holds %.1f%% of the goroutines, blocked in %s and started by %s; "+
			"a service's steady goroutines spread over many sites, while goroutines that never return pile up at one. "+
			"A single profile cannot tell a pile-up from a large pool of idle workers: take a second goroutine profile a few minutes later "+
			"and compare them (memdoctor diff OLD NEW): a pile-up grows.", 100*share, state, orGap(top.CreatedBy, "an unknown creator")),
		Evidence: map[string]float64{
			"goroutines_count":          float64(total),
			"top_site_goroutines_count": float64(top.Count),
			"top_site_share_fraction":   share,
			"pile_up_share_fraction":    pileUpShare,
			"pile_up_min_count":         pileUpCount,
		},
		Culprits: []Culprit{goroutineSite(top, total).Culprit},
		Start:    s.T, End: s.T,
		Profiles: []string{s.Path},
	}
	if top.WaitMinutes > 0 {
		f.Evidence["longest_wait_seconds"] = 60 * float64(top.WaitMinutes)
		f.Detail += fmt.Sprintf(" The longest of them has waited %d minute(s).", top.WaitMinutes)
	}
	if top.Leaked > 0 {
		f.Evidence["leaked_goroutines_count"] = float64(top.Leaked)
		f.Detail += fmt.Sprintf(" The runtime's leak detector marked %d of them leaked.", top.Leaked)
	}
	if n, ok := pinnedStacks(in.f, float64(top.Count)); ok {
		f.Evidence["pinned_stack_bytes"] = n
	}
	f.Advice = append(goroutineAdvice(top.GoroutineGroup),
		"See their stacks: go tool pprof -traces "+s.Path)
	return f, true
}

// clientConns reports the goroutines of HTTP client connections (kept alive by response
// bodies nobody closed): standard library frames only, a known leak.
func clientConns(g facts.StackGroup) bool {
	for _, fr := range g.Stack {
		if fr == "net/http.(*persistConn).readLoop" || fr == "net/http.(*persistConn).writeLoop" {
			return true
		}
	}
	return false
}

// snapshotHotspot is what one heap profile says of allocation: its alloc_space is
// cumulative since the program started, so it shows where allocation went over the
// program's life, not at what rate, and so not what it costs. A known pattern in a site that
// allocated a large share is a suspected hotspot; anything else is not judged.
func (in *input) snapshotHotspot(h *facts.HeapSnapshot) outcome {
	s := h.Snap
	const why = "one heap profile: its allocation is counted since the program started, so its rate, and what it costs in GC work, are unknown (give two heap profiles minutes apart, and a gctrace log)"
	tab, err := h.AllocSpace, h.AllocSpaceErr
	if err != nil {
		return cannot(KindAllocationHotspot, 0, "%s: %v", why, err)
	}
	cs := topSites(tab)
	if len(cs) == 0 || cs[0].Share < hotMinShare {
		return cannot(KindAllocationHotspot, 0, "%s; no site allocated more than %s of the bytes", why, pct(hotMinShare))
	}
	pats := h.Patterns
	top := cs[0]
	if len(pats[top.Function]) == 0 {
		return cannot(KindAllocationHotspot, 0, "%s; %s allocated %s of the bytes, through no pattern memdoctor knows", why, top.Function, pct(top.Share))
	}
	p := pats[top.Function][0]
	f := Finding{
		Kind: KindAllocationHotspot, Severity: Info, Confidence: Suspected, Snapshot: true,
		Title: fmt.Sprintf("one heap profile: %s: %s allocated %s of all bytes since the program started", p.Name, top.Function, pct(top.Share)),
		Detail: fmt.Sprintf("This is one snapshot, not a trend: the profile counts %s allocated since the program started, %s of it by %s, through a known pattern (%s). "+
			"What it costs is unknown from one profile: the GC's work follows the allocation rate, which two profiles minutes apart give.",
			bytesStr(float64(tab.Total)), pct(top.Share), top.Function, p.Name),
		Evidence: map[string]float64{
			"alloc_bytes":          float64(tab.Total),
			"top_site_bytes":       float64(top.Bytes),
			"top_site_share":       top.Share,
			"hotspot_min_fraction": hotMinShare,
		},
		Culprits: cs,
		Start:    s.T, End: s.T,
		Profiles: []string{s.Path},
		Advice:   hotspotAdvice(cs, onlyFirst(pats, top.Function), ""),
	}
	f.Advice = append(f.Advice, fmt.Sprintf("Dig into the lines: go tool pprof -sample_index=alloc_space -list '%s' %s", regexp.QuoteMeta(top.Function), s.Path))
	return found(f)
}

// onlyFirst keeps the patterns of one function: what was matched for it alone.
func onlyFirst(pats map[string][]facts.Pattern, fn string) map[string][]facts.Pattern {
	if p, ok := pats[fn]; ok {
		return map[string][]facts.Pattern{fn: p}
	}
	return map[string][]facts.Pattern{}
}
