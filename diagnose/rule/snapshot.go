package rule

import (
	"math"
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
	// Advice says what fixes it (the words layer fills it).
	Advice string `json:"advice"`
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

// snapshotViews describes the kinds of profile the facts hold only one of.
func snapshotViews(fs *facts.Facts, th *Culprits) ([]SnapshotView, []Note) {
	var out []SnapshotView
	var notes []Note
	if h := fs.HeapSnap; h != nil {
		if v, err := heapView(h, th); err == nil {
			out = append(out, v)
		} else {
			notes = append(notes, Note{What: NoteSnapshotError, Err: err})
		}
	}
	if g := &fs.Goroutine; g.Single != nil {
		if v, err := goroutineView(*g.Single, g.SingleSites, g.SingleErr); err == nil {
			out = append(out, v)
		} else {
			notes = append(notes, Note{What: NoteSnapshotError, Err: err})
		}
	}
	return out, notes
}

// heapView lists a heap profile's top retainers and allocators in the program's own code: by
// bytes, else (a profile that kept only object counts) by objects.
func heapView(h *facts.HeapSnapshot, th *Culprits) (SnapshotView, error) {
	s := h.Snap
	v := SnapshotView{Kind: s.Kind, Time: s.T, Profile: s.Path, WindowSeconds: h.Window}
	held, allocated := h.Held, h.Allocated
	if held != nil {
		v.Retainers = topSites(held, th)
		if held.Unit == "bytes" {
			v.InuseBytes = held.Total
		} else {
			v.InuseObjects = held.Total
		}
	}
	if allocated != nil {
		v.Allocators = topSites(allocated, th)
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
				v.Patterns = append(v.Patterns, SnapshotPattern{Name: p.Name, Function: c.Function, Share: c.Share})
			}
		}
	}
	return v, nil
}

// topSites are a table's heaviest sites, as culprits with their share of its total.
func topSites(tab *facts.SiteTable, th *Culprits) []Culprit {
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
	lim := *th
	lim.Max = snapTopSites
	return keepCulprits(cs, &lim)
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
		State: WaitState(g.GoroutineGroup), CreatedBy: g.CreatedBy, WaitMinutes: g.WaitMinutes, Leaked: g.Leaked,
	}
}

// PileUpCase is the suspected goroutine pile-up of a single goroutine profile.
type PileUpCase struct {
	Top          facts.GoroutineGroup
	Total        int
	Share        float64
	State        string
	PinnedStacks float64 // 0 when unknown
	Snap         string
	// The thresholds it passed.
	MinShare float64
	MinCount int
}

// pileUp is the suspected goroutine pile-up of a single goroutine profile: one blocked site
// of the program's own code (or an HTTP client's connections, whose readers are all standard
// library) holding at least PileUpShare of all goroutines and at least PileUpCount.
func pileUp(fs *facts.Facts, th *Thresholds) (Verdict, bool) {
	gl := &th.GoroutineLeak
	g := &fs.Goroutine
	s, sites, err := *g.Single, g.SingleSites, g.SingleErr
	if err != nil || len(sites) == 0 {
		return Verdict{}, false
	}
	total := 0
	for _, g := range sites {
		total += g.Count
	}
	top := sites[0]
	state := WaitState(top.GoroutineGroup)
	share := float64(top.Count) / float64(total)
	blocked := state != "sleep" && state != "running" && state != "runnable" && state != "a wait"
	if top.Count < gl.PileUpCount || share < gl.PileUpShare || !blocked || !top.Culprit.Own && !clientConns(top.GoroutineGroup) {
		return Verdict{}, false
	}
	c := &PileUpCase{Top: top, Total: total, Share: share, State: state, Snap: s.Path, MinShare: gl.PileUpShare, MinCount: gl.PileUpCount}
	if n, ok := pinnedStacks(fs, float64(top.Count)); ok {
		c.PinnedStacks = n
	}
	return Verdict{
		Kind: KindGoroutineLeak, Severity: Info, Confidence: Suspected, Snapshot: true,
		Culprits: []Culprit{goroutineSite(top, total).Culprit},
		Start:    s.T, End: s.T,
		Profiles: []string{s.Path},
		Case:     c,
	}, true
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

// SnapshotHotspotCase is a known allocation pattern in the site that allocated most in the
// only heap profile.
type SnapshotHotspotCase struct {
	Patterns []facts.Pattern // the top site's, heaviest first
	Total    int64           // bytes allocated since the program started
	MinShare float64
	Snap     string
}

// snapshotHotspot is what one heap profile says of allocation: its alloc_space is
// cumulative since the program started, so it shows where allocation went over the
// program's life, not at what rate, and so not what it costs. A known pattern in a site that
// allocated a large share is a suspected hotspot; anything else is not judged.
func snapshotHotspot(h *facts.HeapSnapshot, th *Thresholds) outcome {
	s := h.Snap
	tab, err := h.AllocSpace, h.AllocSpaceErr
	if err != nil {
		return outcome{unjudged: &Unjudged{Kind: KindAllocationHotspot, Why: WhyOneSnapshot, Err: err}}
	}
	cs := topSites(tab, &th.Culprits)
	if len(cs) == 0 || cs[0].Share < th.Hotspot.MinShare {
		return outcome{unjudged: &Unjudged{Kind: KindAllocationHotspot, Why: WhyOneSnapshotNoSite, Value: th.Hotspot.MinShare}}
	}
	top := cs[0]
	pats := h.Patterns[top.Function]
	if len(pats) == 0 {
		return outcome{unjudged: &Unjudged{Kind: KindAllocationHotspot, Why: WhyOneSnapshotNoPattern, Site: top.Function, Value: top.Share}}
	}
	return outcome{verdicts: []Verdict{{
		Kind: KindAllocationHotspot, Severity: Info, Confidence: Suspected, Snapshot: true,
		Culprits: cs,
		Start:    s.T, End: s.T,
		Profiles: []string{s.Path},
		Case:     &SnapshotHotspotCase{Patterns: pats, Total: tab.Total, MinShare: th.Hotspot.MinShare, Snap: s.Path},
	}}}
}
