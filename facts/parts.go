package facts

import (
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/evidence"
)

// Parts of memory that can grow, by name (the names are the v1 JSON evidence keys' roots).
const (
	PartLive     = "live heap"
	PartGarbage  = "garbage awaiting GC"
	PartRetained = "free heap the runtime keeps"
	PartReleased = "released memory still resident"
	PartStacks   = "goroutine stacks"
	PartNonGo    = "non-Go memory"
	PartFiles    = "files and the binary"
)

// Part is how much one part of memory grew.
type Part struct {
	Name  string
	Bytes float64
}

// Resident is resident memory as the memory-growth rule judges it: RSS, else (a remote
// process) what the Go runtime holds, and which parts of it grew.
type Resident struct {
	Series Series
	// Runtime is true when Series is what the Go runtime holds, not RSS.
	Runtime bool
	// Floor is the series' lows once resident memory settled after the start (residentGrace),
	// and FloorParts what each part of memory grew over them, largest first.
	Floor      []Point
	FloorParts []Part
	// Settled are the readings once the process settled (startupGrace), and SettledParts what
	// each part grew over them.
	Settled      []Point
	SettledParts []Part
}

func residentOf(ev *evidence.Evidence) Resident {
	r := Resident{Series: ev.RSS}
	if r.Series.Empty() {
		r.Series, r.Runtime = ev.RuntimeResident, true
	}
	r.Floor = Floor(settledAfter(ev, r.Series.Points, residentGrace))
	if n := len(r.Floor); n > 0 {
		r.FloorParts = growthParts(ev, r.Floor[0].T, r.Floor[n-1].T)
	}
	r.Settled = settled(ev, r.Series.Points)
	if n := len(r.Settled); n > 0 {
		r.SettledParts = growthParts(ev, r.Settled[0].T, r.Settled[n-1].T)
	}
	return r
}

// growthParts is how much each part of memory grew over [from, to], largest first.
func growthParts(ev *evidence.Evidence, from, to time.Time) []Part {
	live := floorGrowth(&ev.Live, from, to)
	inUse := floorGrowth(&ev.HeapInUse, from, to)
	parts := []Part{
		{PartLive, live},
		{PartGarbage, inUse - live},
		{PartRetained, floorGrowth(&ev.HeapFree, from, to)},
		{PartReleased, floorGrowth(&ev.ReleasedResident, from, to)},
		{PartStacks, floorGrowth(&ev.Stacks, from, to)},
		{PartNonGo, floorGrowth(&ev.NonGo, from, to)},
		{PartFiles, floorGrowth(&ev.RSSFile, from, to)},
	}
	if ev.Live.Empty() {
		parts[0].Bytes, parts[1].Bytes = inUse, 0
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Bytes > parts[j].Bytes })
	return parts
}

// floorGrowth is how much a series' floor rose over [from, to] (0 when unknown).
func floorGrowth(s *Series, from, to time.Time) float64 {
	pts := Floor(s.Between(from.Add(-time.Second), to.Add(time.Second)))
	if len(pts) < 2 {
		return 0
	}
	k := min(max(len(pts)/6, 1), 5)
	return Median(Values(pts[len(pts)-k:])) - Median(Values(pts[:k]))
}

// PartBytes is how much the named part grew.
func PartBytes(parts []Part, name string) float64 {
	for _, p := range parts {
		if p.Name == name {
			return p.Bytes
		}
	}
	return 0
}
