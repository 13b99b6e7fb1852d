package words

import (
	"fmt"

	"github.com/memdoctor/memdoctor/diagnose/rule"
)

func nonGo(f *Finding, c *rule.NonGoCase) {
	med, medShare := c.Median, c.Share
	f.Title = fmt.Sprintf("%s of resident memory is outside the Go runtime (cgo, C, mmap)", bytesStr(med))
	f.Detail = fmt.Sprintf("About %s of RSS (median over %d readings, %s of it) is anonymous memory the Go runtime does not account for: "+
		"C allocations through cgo or C libraries, syscall.Mmap regions, or memory another runtime manages. Go's profiles cannot see it "+
		"and GOMEMLIMIT does not bound it. It is a lower bound: RssAnon less LazyFree less all the memory the runtime could have resident.",
		bytesStr(med), c.Readings, pct(medShare))
	f.Evidence = map[string]float64{
		"non_go_median_bytes": med,
		"non_go_peak_bytes":   c.Peak,
		"non_go_latest_bytes": c.Latest,
		"non_go_share_of_rss": medShare,
		"readings_count":      float64(c.Readings),
	}
	f.Advice = []string{
		fmt.Sprintf("Find the mappings: pmap -x %d, or sort the Anonymous field of /proc/%[1]d/smaps by size; large anonymous regions that are not the Go heap arenas are the culprits.", c.PID),
		"For cgo: check that every C.malloc/C.CString has its C.free, and bound the caches of C libraries; with glibc, MALLOC_ARENA_MAX=2 limits per-thread arenas.",
		"For syscall.Mmap: munmap regions when done, and size off-heap caches with an explicit limit (GOMEMLIMIT does not see them: subtract them from it).",
	}
	if c.HasRSS {
		f.Evidence["rss_latest_bytes"] = c.RSS
	}
	if g := c.Growth; g != nil {
		f.Evidence["non_go_growth_bytes_per_minute"] = g.PerMinute
		f.Detail += fmt.Sprintf(" It grows steadily, %s -> %s: a leak outside Go.", bytesStr(g.First), bytesStr(g.Last))
	}
}
