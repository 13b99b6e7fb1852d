package diagnose

import (
	"time"

	"github.com/memdoctor/memdoctor/session"
)

// Breakdown splits resident memory into where it goes, at the RSS peak and at the end.
type Breakdown struct {
	Peak   *BreakdownAt `json:"peak,omitempty"`
	Latest *BreakdownAt `json:"latest,omitempty"`
}

// BreakdownAt is the split of resident memory at one instant. The Go rows come from the Go
// reading nearest in time to the /proc reading (GoSkewSeconds apart). The rows add up to
// RSSBytes: every Go row, plus released-but-resident, non-Go and file-backed memory, minus
// NotResidentBytes (memory Go counts that the kernel never paged in).
type BreakdownAt struct {
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

// Row is one line of a breakdown, for display.
type Row struct {
	Name, Explanation string
	Bytes             uint64
	Minus             bool // subtracted from the total
}

// Rows returns the breakdown as display rows, in a fixed order.
func (b *BreakdownAt) Rows() []Row {
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

// computeBreakdown returns the breakdown at the RSS peak and at the last reading.
func computeBreakdown(in *Input) Breakdown {
	var b Breakdown
	if len(in.Proc) > 0 {
		peak := 0
		for i, p := range in.Proc {
			if p.RSSBytes > in.Proc[peak].RSSBytes {
				peak = i
			}
		}
		b.Peak = in.breakdownAt(in.Proc[peak].T, &in.Proc[peak].Proc)
		last := len(in.Proc) - 1
		b.Latest = in.breakdownAt(in.Proc[last].T, &in.Proc[last].Proc)
		return b
	}
	if len(in.Go) > 0 { // a remote target: only the Go side is known
		peak := 0
		for i, g := range in.Go {
			if g.RuntimeResident() > in.Go[peak].RuntimeResident() {
				peak = i
			}
		}
		b.Peak = in.breakdownAt(in.Go[peak].T, nil)
		b.Latest = in.breakdownAt(in.Go[len(in.Go)-1].T, nil)
	}
	return b
}

func (in *Input) breakdownAt(t time.Time, p *session.Proc) *BreakdownAt {
	b := &BreakdownAt{Time: t}
	if p != nil {
		b.RSSBytes = p.RSSBytes
		b.FileBytes = p.RSSFileBytes + p.RSSShmemBytes
	}
	if g, ok := in.nearestGo(t); ok {
		b.GoSource = g.Source
		b.GoSkewSeconds = absDur(g.T.Sub(t)).Seconds()
		live := g.HeapLiveBytes
		b.LiveSource = g.Source
		if live == 0 {
			pts, src := in.LiveHeap()
			if v, ok := valueAt(pts, g.T); ok {
				live, b.LiveSource = uint64(v.V), src
			}
		}
		if live > g.HeapObjectsBytes && g.HeapObjectsBytes > 0 {
			live = g.HeapObjectsBytes // the live estimate cannot exceed what the heap holds
		}
		b.LiveHeapBytes = live
		b.GarbageBytes = g.HeapObjectsBytes - live
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
	}
	if c, ok := in.nearestCgroup(t); ok {
		b.CgroupLimitBytes = c.LimitBytes
		b.CgroupUsageBytes = c.UsageBytes
		b.RSSOfCgroupLimit = ratio(b.RSSBytes, c.LimitBytes)
	}
	b.MemoryBudgetBytes = in.Budget
	b.RSSOfBudget = ratio(b.RSSBytes, in.Budget)
	return b
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
