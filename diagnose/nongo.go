package diagnose

import (
	"fmt"
	"time"

	"github.com/memdoctor/memdoctor/facts"
)

// Thresholds of the non-go-memory rule.
const (
	nonGoMinBytes = 32 << 20
	nonGoMinShare = 0.20 // of RSS
)

// nonGoMemory reports resident anonymous memory that the Go runtime does not account for:
// cgo/C allocations and syscall.Mmap regions. It is at least RssAnon - LazyFree - (what the
// runtime may have resident), so it is a lower bound.
func nonGoMemory(in *input) outcome {
	fs := in.f
	if fs.Aligned == 0 {
		return cannot(KindNonGoMemory, 0, "memory could not be split: %s", fs.Gaps[facts.GapAligned])
	}
	if fs.NonGo.Empty() && fs.Gaps[facts.GapNonGo] != "" {
		return cannot(KindNonGoMemory, 0, "memory outside Go could not be measured: %s", fs.Gaps[facts.GapNonGo])
	}
	ng, share := fs.NonGo.Points, fs.NonGoShare.Points
	if len(ng) < 3 {
		return cannot(KindNonGoMemory, 3*time.Second, "memory was split %d time(s): too few to judge", fs.Aligned)
	}
	med, medShare := facts.Median(facts.Values(ng)), facts.Median(facts.Values(share))
	if med < nonGoMinBytes || medShare < nonGoMinShare {
		return outcome{}
	}
	peak, _ := facts.MaxPoint(ng)
	last := ng[len(ng)-1]
	f := Finding{
		Kind:       KindNonGoMemory,
		Severity:   Warning,
		Confidence: Confirmed,
		Title:      fmt.Sprintf("%s of resident memory is outside the Go runtime (cgo, C, mmap)", bytesStr(med)),
		Detail: fmt.Sprintf("About %s of RSS (median over %d readings, %s of it) is anonymous memory the Go runtime does not account for: "+
			"C allocations through cgo or C libraries, syscall.Mmap regions, or memory another runtime manages. Go's profiles cannot see it "+
			"and GOMEMLIMIT does not bound it. It is a lower bound: RssAnon less LazyFree less all the memory the runtime could have resident.",
			bytesStr(med), len(ng), pct(medShare)),
		Evidence: map[string]float64{
			"non_go_median_bytes": med,
			"non_go_peak_bytes":   peak.V,
			"non_go_latest_bytes": last.V,
			"non_go_share_of_rss": medShare,
			"readings_count":      float64(len(ng)),
		},
		Start: ng[0].T, End: last.T,
		Advice: []string{
			fmt.Sprintf("Find the mappings: pmap -x %d, or sort the Anonymous field of /proc/%[1]d/smaps by size; large anonymous regions that are not the Go heap arenas are the culprits.", fs.Target.PID),
			"For cgo: check that every C.malloc/C.CString has its C.free, and bound the caches of C libraries; with glibc, MALLOC_ARENA_MAX=2 limits per-thread arenas.",
			"For syscall.Mmap: munmap regions when done, and size off-heap caches with an explicit limit (GOMEMLIMIT does not see them: subtract them from it).",
		},
	}
	if !fs.RSS.Empty() {
		f.Evidence["rss_latest_bytes"] = fs.RSS.Last().V
	}
	if len(ng) < 5 {
		f.Confidence, f.WatchMoreSeconds = Suspected, 5*fs.NonGo.Res.Step.Seconds()
	}
	if g := judgeGrowth(fs.NonGoFloor, limits{minAbs: nonGoMinBytes, minRel: 0.2, minSpan: 10 * time.Second}, 0); g.conf == Confirmed {
		f.Evidence["non_go_growth_bytes_per_minute"] = g.perMinute()
		f.Detail += fmt.Sprintf(" It grows steadily, %s -> %s: a leak outside Go.", bytesStr(g.first), bytesStr(g.last))
	}
	return found(f)
}
