package report

import (
	"time"

	"github.com/memdoctor/memdoctor/agent/breakdown"
	"github.com/memdoctor/memdoctor/diagnose"
	"github.com/memdoctor/memdoctor/evidence"
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

// memoryChart is resident memory over time as a stacked breakdown, with RSS as a line and the
// memory budget and cgroup limit as horizontal lines. The bands are drawn where a Go reading
// and a /proc reading were taken together (the evidence's splits: at most two per time
// slice, the lowest and highest RSS); RSS itself at every reading the evidence kept.
func memoryChart(ev *evidence.Evidence, d *diagnose.Diagnosis, t0 time.Time, buckets int) Chart {
	c := Chart{ID: "memory", Title: "Resident memory: where it goes", Unit: "bytes", Stacked: true}
	rows := downsampleSplits(ev.Splits, ev.Start, ev.End, buckets)
	rss := downsamplePoints(ev.RSS.Points, ev.Start, ev.End, buckets)
	switch {
	case len(rows) > 0 && !ev.RSS.Empty():
		c.Points = ev.RSS.Len()
		c.Caption = "Each band is one part of RSS, from /proc and the Go runtime's own figures taken together; the dashed line is RSS itself. " +
			"Where the bands rise above it, the runtime counts memory the kernel never paged in."
	case !ev.RSS.Empty():
		c.Points = ev.RSS.Len()
		c.Caption = "RSS from /proc. No Go reading was taken close enough to a /proc reading to split it (see the notes)."
	case len(rows) > 0:
		c.Points = len(rows)
		c.Caption = "The Go runtime's own figures only: memdoctor could not read this process's /proc, so RSS and non-Go memory are unknown."
	default:
		c.Empty = "No memory samples in this session."
		return c
	}
	bands := make([][]evidence.Point, 0, len(memoryBands)+1)
	kept := make([]band, 0, len(memoryBands))
	for _, b := range memoryBands {
		pts := make([]evidence.Point, len(rows))
		any := false
		for i := range rows {
			v := b.get(&rows[i])
			pts[i] = evidence.Point{T: rows[i].Time, V: float64(v)}
			any = any || v > 0
		}
		if any { // a band that is always empty only clutters the legend
			bands = append(bands, pts)
			kept = append(kept, b)
		}
	}
	if len(rss) > 0 {
		bands = append(bands, rss)
	}
	xs, vals := join(bands...)
	c.X = nums{secondsSince(t0, xs), 3}
	for k, b := range kept {
		c.Series = append(c.Series, Series{Name: b.name, Unit: "bytes", Area: true, Color: bandColor(b.name), Pattern: b.pattern, Values: nums{vals[k], 0}})
	}
	if len(rss) > 0 {
		c.Series = append(c.Series, Series{Name: "RSS", Unit: "bytes", Color: 9, Dash: []int{6, 3}, Values: nums{vals[len(vals)-1], 0}})
	}
	c.Lines = limitLines(d.Summary)
	return c
}

// bandColor is a band's color index: its place in memoryBands, whichever bands are drawn.
func bandColor(name string) int {
	for i, b := range memoryBands {
		if b.name == name {
			return i
		}
	}
	return 0
}

// downsampleSplits keeps, for each of buckets slices of the window, the splits with the
// lowest and highest resident memory.
func downsampleSplits(rows []breakdown.At, start, end time.Time, buckets int) []breakdown.At {
	idx := pickExtremes(len(rows), func(i int) time.Time { return rows[i].Time },
		func(i int) float64 { return float64(rows[i].RSSBytes) }, start, end, buckets)
	if len(idx) == len(rows) {
		return rows
	}
	out := make([]breakdown.At, len(idx))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out
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
