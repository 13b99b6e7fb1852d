package report

import (
	"sort"
	"time"

	"github.com/memdoctor/memdoctor/breakdown"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/session"
)

// band is one layer of the resident-memory stack.
type band struct {
	name    string
	pattern string
	get     func(*breakdown.At) uint64
}

// memoryBands are the layers of the stacked chart, bottom first, in the order of
// breakdown.At.Rows.
var memoryBands = []band{
	{"live heap", "solid", func(b *breakdown.At) uint64 { return b.LiveHeapBytes }},
	{"garbage awaiting GC", "diag", func(b *breakdown.At) uint64 { return b.GarbageBytes }},
	{"fragmentation", "dots", func(b *breakdown.At) uint64 { return b.FragmentationBytes }},
	{"retained free heap", "horiz", func(b *breakdown.At) uint64 { return b.RetainedFreeBytes }},
	{"released, still resident", "rdiag", func(b *breakdown.At) uint64 { return b.ReleasedResidentBytes }},
	{"goroutine stacks", "vert", func(b *breakdown.At) uint64 { return b.StacksBytes }},
	{"runtime metadata", "cross", func(b *breakdown.At) uint64 { return b.RuntimeMetadataBytes }},
	{"non-Go memory", "grid", func(b *breakdown.At) uint64 { return b.NonGoBytes }},
	{"binary and files", "checker", func(b *breakdown.At) uint64 { return b.FileBytes }},
}

// breakdowner computes breakdown.At at any reading as diagnose.Input.BreakdownAt does, but
// with the live-heap series computed once, so that thousands of instants cost O(log n) each.
type breakdowner struct {
	in      *diagnose.Input
	live    []diagnose.Point
	liveSrc string
}

func newBreakdowner(in *diagnose.Input) *breakdowner {
	live, src := in.LiveHeap()
	return &breakdowner{in: in, live: live, liveSrc: src}
}

// at splits memory at t, with p the /proc reading at t (nil when remote).
func (b *breakdowner) at(t time.Time, p *session.Proc) breakdown.At {
	g, ok := nearestGo(b.in.Go, t)
	if !ok {
		return breakdown.Compute(t, p, nil, 0, "")
	}
	var live uint64
	if v, ok := lastAtOrBefore(b.live, g.T); ok {
		live = uint64(v)
	}
	return breakdown.Compute(t, p, &g.GoMem, live, b.liveSrc)
}

// nearestGo returns the Go reading closest in time to t (the earlier one on a tie).
func nearestGo(gs []diagnose.GoPoint, t time.Time) (diagnose.GoPoint, bool) {
	if len(gs) == 0 {
		return diagnose.GoPoint{}, false
	}
	i := sort.Search(len(gs), func(i int) bool { return !gs[i].T.Before(t) })
	switch {
	case i == 0:
		return gs[0], true
	case i == len(gs):
		return gs[i-1], true
	case gs[i].T.Sub(t) < t.Sub(gs[i-1].T):
		return gs[i], true
	}
	return gs[i-1], true
}

// lastAtOrBefore returns the value of the last point at or before t, else of the first point.
func lastAtOrBefore(pts []diagnose.Point, t time.Time) (float64, bool) {
	if len(pts) == 0 {
		return 0, false
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].T.After(t) })
	if i == 0 {
		return pts[0].V, true
	}
	return pts[i-1].V, true
}

// memoryChart is resident memory over time as a stacked breakdown, with RSS as a line and the
// memory budget and cgroup limit as horizontal lines. At most 2*buckets instants are drawn:
// in each time slice, the readings with the lowest and the highest RSS.
func memoryChart(in *diagnose.Input, d *diagnose.Diagnosis, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "memory", Title: "Resident memory: where it goes", Unit: "bytes", Stacked: true}
	bd := newBreakdowner(in)
	var rows []breakdown.At
	switch {
	case len(in.Proc) > 0:
		c.Points = len(in.Proc)
		idx := pickExtremes(len(in.Proc), func(i int) time.Time { return in.Proc[i].T },
			func(i int) float64 { return float64(in.Proc[i].RSSBytes) }, in.Start, in.End, buckets)
		for _, i := range idx {
			rows = append(rows, bd.at(in.Proc[i].T, &in.Proc[i].Proc))
		}
		c.Caption = "Each band is one part of RSS, from /proc and the Go runtime's own figures; the dashed line is RSS itself. " +
			"Where the bands rise above it, the runtime counts memory the kernel never paged in."
	case len(in.Go) > 0:
		c.Points = len(in.Go)
		idx := pickExtremes(len(in.Go), func(i int) time.Time { return in.Go[i].T },
			func(i int) float64 { return float64(in.Go[i].RuntimeResident()) }, in.Start, in.End, buckets)
		for _, i := range idx {
			rows = append(rows, bd.at(in.Go[i].T, nil))
		}
		c.Caption = "The Go runtime's own figures only: memdoctor could not read this process's /proc, so RSS and non-Go memory are unknown."
	default:
		c.Empty = "No memory samples in this session."
		return c
	}
	ts := make([]time.Time, len(rows))
	for i, r := range rows {
		ts[i] = r.Time
	}
	c.X = nums{secondsSince(t0, ts), 3}
	for k, b := range memoryBands {
		vs := make([]float64, len(rows))
		any := false
		for i := range rows {
			v := b.get(&rows[i])
			vs[i] = float64(v)
			any = any || v > 0
		}
		if !any {
			continue // a band that is always empty only clutters the legend
		}
		c.Series = append(c.Series, Series{Name: b.name, Unit: "bytes", Area: true, Color: k, Pattern: b.pattern, Values: nums{vs, 0}})
	}
	if len(in.Proc) > 0 {
		vs := make([]float64, len(rows))
		for i := range rows {
			vs[i] = float64(rows[i].RSSBytes)
		}
		c.Series = append(c.Series, Series{Name: "RSS", Unit: "bytes", Color: 9, Dash: []int{6, 3}, Values: nums{vs, 0}})
	}
	c.Lines = limitLines(d.Summary)
	return c
}

// limitLines are the memory budget and the cgroup limit, drawn once when they are the same.
func limitLines(s diagnose.Summary) []Line {
	var out []Line
	if s.MemoryBudgetBytes > 0 {
		label := "memory budget " + Bytes(s.MemoryBudgetBytes)
		if s.MemoryBudgetSource == "cgroup" || s.MemoryBudgetBytes == s.CgroupLimitBytes {
			label += " (= cgroup limit)"
		}
		out = append(out, Line{Label: label, Value: float64(s.MemoryBudgetBytes), Dash: []int{10, 4}})
	}
	if s.CgroupLimitBytes > 0 && s.CgroupLimitBytes != s.MemoryBudgetBytes {
		out = append(out, Line{Label: "cgroup limit " + Bytes(s.CgroupLimitBytes), Value: float64(s.CgroupLimitBytes), Dash: []int{2, 4}})
	}
	return out
}
