// Package breakdown splits a process's resident memory into where it goes: live heap,
// garbage awaiting GC, fragmentation, free heap the runtime retains, released pages the
// kernel has not reclaimed (MADV_FREE), goroutine stacks, runtime metadata, memory Go does
// not know about, and the binary and mapped files. It is the answer to "pprof says 7 MB,
// docker says 400 MB".
//
// It is pure arithmetic over one /proc reading and one Go runtime reading, with no
// dependencies beyond the session types, so the embeddable agent uses it too.
package breakdown

import (
	"time"

	"github.com/memdoctor/memdoctor/agent/record"
)

// At is the split of resident memory at one instant. The rows add up to RSSBytes: every Go
// row, plus released-but-resident, non-Go and file-backed memory, minus NotResidentBytes
// (memory Go counts that the kernel never paged in).
type At struct {
	Time     time.Time `json:"time"`
	RSSBytes uint64    `json:"rss_bytes"`

	LiveHeapBytes         uint64 `json:"live_heap_bytes"`
	GarbageBytes          uint64 `json:"garbage_bytes"`
	FragmentationBytes    uint64 `json:"fragmentation_bytes"`
	RetainedFreeBytes     uint64 `json:"retained_free_bytes"`
	ReleasedResidentBytes uint64 `json:"released_resident_bytes"`
	StacksBytes           uint64 `json:"stacks_bytes"`
	RuntimeMetadataBytes  uint64 `json:"runtime_metadata_bytes"`
	NonGoBytes            uint64 `json:"non_go_bytes"`
	FileBytes             uint64 `json:"file_bytes"`
	NotResidentBytes      uint64 `json:"not_resident_bytes"`

	// GoSource is where the Go rows came from ("" = no Go reading: only RSS is known).
	GoSource      string  `json:"go_source,omitempty"`
	GoSkewSeconds float64 `json:"go_skew_seconds,omitempty"`
	LiveSource    string  `json:"live_source,omitempty"`

	CgroupLimitBytes  uint64  `json:"cgroup_limit_bytes,omitempty"`
	CgroupUsageBytes  uint64  `json:"cgroup_usage_bytes,omitempty"`
	RSSOfCgroupLimit  float64 `json:"rss_of_cgroup_limit,omitempty"`
	MemoryBudgetBytes uint64  `json:"memory_budget_bytes,omitempty"`
	RSSOfBudget       float64 `json:"rss_of_budget,omitempty"`
}

// Compute splits memory at t. p or g may be nil (a remote target has no /proc reading; a
// target without pprof has no Go reading). live is the live heap when the Go reading does
// not carry it (from gctrace or heap profiles; 0 = unknown), liveSource names where it came
// from.
func Compute(t time.Time, p *record.Proc, g *record.GoMem, live uint64, liveSource string) At {
	b := At{Time: t}
	if p != nil {
		b.RSSBytes = p.RSSBytes
		b.FileBytes = p.RSSFileBytes + p.RSSShmemBytes
	}
	if g == nil {
		return b
	}
	b.GoSource = g.Source
	b.LiveSource = liveSource
	if g.HeapLiveBytes > 0 {
		live, b.LiveSource = g.HeapLiveBytes, g.Source
	}
	if live > g.HeapObjectsBytes && g.HeapObjectsBytes > 0 {
		live = g.HeapObjectsBytes // the live estimate cannot exceed what the heap holds
	}
	b.LiveHeapBytes = live
	b.GarbageBytes = sub(g.HeapObjectsBytes, live)
	b.FragmentationBytes = g.HeapUnusedBytes
	b.RetainedFreeBytes = g.HeapFreeBytes
	b.StacksBytes = g.HeapStacksBytes + g.OSStacksBytes
	b.RuntimeMetadataBytes = g.MetadataBytes + g.OtherBytes
	if p != nil {
		b.ReleasedResidentBytes = min(p.LazyFreeBytes, g.HeapReleasedBytes)
		goResident := g.RuntimeResident()
		anon := sub(p.RSSAnonBytes, p.LazyFreeBytes)
		b.NonGoBytes = sub(anon, goResident)
		b.NotResidentBytes = sub(goResident, anon)
		// What LazyFree holds beyond Go's released pages is someone else's.
		b.NonGoBytes += sub(p.LazyFreeBytes, b.ReleasedResidentBytes)
	}
	return b
}

// SetLimits fills the cgroup and budget figures.
func (b *At) SetLimits(c *record.Cgroup, budget uint64) {
	if c != nil {
		b.CgroupLimitBytes = c.LimitBytes
		b.CgroupUsageBytes = c.UsageBytes
		b.RSSOfCgroupLimit = ratio(b.RSSBytes, c.LimitBytes)
	}
	b.MemoryBudgetBytes = budget
	b.RSSOfBudget = ratio(b.RSSBytes, budget)
}

// Row is one line of a breakdown, for display.
type Row struct {
	Name, Explanation string
	Bytes             uint64
	Minus             bool // subtracted from the total
}

// Rows returns the breakdown as display rows, in a fixed order.
func (b *At) Rows() []Row {
	return []Row{
		{"live heap", "objects reachable at the last GC", b.LiveHeapBytes, false},
		{"garbage awaiting GC", "dead objects the next GC frees (bounded by the GC goal)", b.GarbageBytes, false},
		{"fragmentation", "unused space inside in-use heap spans", b.FragmentationBytes, false},
		{"retained free heap", "free pages the runtime keeps for reuse; the scavenger returns them slowly", b.RetainedFreeBytes, false},
		{"released, still resident", "pages returned with MADV_FREE the kernel has not reclaimed (LazyFree)", b.ReleasedResidentBytes, false},
		{"goroutine stacks", "stacks of goroutines (and OS threads)", b.StacksBytes, false},
		{"runtime metadata", "GC and allocator metadata, profiling buckets, other runtime", b.RuntimeMetadataBytes, false},
		{"non-Go memory", "anonymous memory Go does not account for: cgo/C malloc, syscall.Mmap", b.NonGoBytes, false},
		{"binary and files", "executable code and mapped files (RssFile + shmem)", b.FileBytes, false},
		{"counted, not resident", "memory Go has mapped but never touched (not in RSS)", b.NotResidentBytes, true},
	}
}

// Explained is what the Go runtime and the files account for, without retention: live heap,
// garbage up to the goal, fragmentation, stacks, metadata and files.
func (b *At) Explained() uint64 {
	return b.LiveHeapBytes + b.GarbageBytes + b.FragmentationBytes + b.StacksBytes + b.RuntimeMetadataBytes + b.FileBytes
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
