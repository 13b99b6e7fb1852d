package diagnose

import "fmt"

func init() { register(KindNonGoMemory, nonGoMemory) }

// Thresholds of the non-go-memory rule.
const (
	nonGoMinBytes = 32 << 20
	nonGoMinShare = 0.20 // of RSS
)

// nonGoMemory reports resident anonymous memory that the Go runtime does not account for:
// cgo/C allocations and syscall.Mmap regions. It is at least RssAnon - LazyFree - (what the
// runtime may have resident), so it is a lower bound.
func nonGoMemory(in *Input) []Finding {
	bs := in.Breakdowns()
	if len(bs) < 3 {
		return nil
	}
	var ng, share []float64
	for _, b := range bs {
		ng = append(ng, float64(b.NonGoBytes))
		share = append(share, float64(b.NonGoBytes)/float64(max(b.RSSBytes, 1)))
	}
	med, medShare := median(ng), median(share)
	if med < nonGoMinBytes || medShare < nonGoMinShare {
		return nil
	}
	peak, _ := maxPoint(pointsOf(bs, func(i int) float64 { return ng[i] }))
	last := bs[len(bs)-1]
	f := Finding{
		Kind:     KindNonGoMemory,
		Severity: Warning,
		Title:    fmt.Sprintf("%s of resident memory is outside the Go runtime (cgo, C, mmap)", bytesStr(med)),
		Detail: fmt.Sprintf("About %s of RSS (median over %d readings, %s of it) is anonymous memory the Go runtime does not account for: "+
			"C allocations through cgo or C libraries, syscall.Mmap regions, or memory another runtime manages. Go's profiles cannot see it "+
			"and GOMEMLIMIT does not bound it. It is a lower bound: RssAnon less LazyFree less all the memory the runtime could have resident.",
			bytesStr(med), len(bs), pct(medShare)),
		Evidence: map[string]float64{
			"non_go_median_bytes": med,
			"non_go_peak_bytes":   peak.V,
			"non_go_latest_bytes": float64(last.NonGoBytes),
			"non_go_share_of_rss": medShare,
			"rss_latest_bytes":    float64(last.RSSBytes),
			"readings_count":      float64(len(bs)),
		},
		Start: bs[0].Time, End: last.Time,
		Advice: []string{
			fmt.Sprintf("Find the mappings: pmap -x %d, or sort the Anonymous field of /proc/%[1]d/smaps by size; large anonymous regions that are not the Go heap arenas are the culprits.", in.Session.Manifest.Target.PID),
			"For cgo: check that every C.malloc/C.CString has its C.free, and bound the caches of C libraries; with glibc, MALLOC_ARENA_MAX=2 limits per-thread arenas.",
			"For syscall.Mmap: munmap regions when done, and size off-heap caches with an explicit limit (GOMEMLIMIT does not see them: subtract them from it).",
		},
	}
	if t := trend(pointsOf(bs, func(i int) float64 { return ng[i] })); t.Increasing(0.001) && t.Last-t.First >= nonGoMinBytes {
		f.Evidence["non_go_growth_bytes_per_minute"] = t.Slope * 60
		f.Detail += fmt.Sprintf(" It grows steadily, %s/min: a leak outside Go.", bytesStr(t.Slope*60))
	}
	return []Finding{f}
}
